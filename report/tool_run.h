// Running an outside program on files of ours (gnuplot, rsvg-convert): in a private temporary folder that no
// one else writes, with arguments we choose (never user text), no standard input, and its error output kept
// for the message. The folder and everything in it is removed when the ToolRun goes.
#ifndef NMSPARSE_REPORT_TOOL_RUN_H_
#define NMSPARSE_REPORT_TOOL_RUN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace nmsparse::report {

class ToolRun {
 public:
  // `tag` names the folder ("gnuplot": $TMPDIR/nmsparse-gnuplot.XXXXXX); path() is empty when it could not be
  // made.
  explicit ToolRun(const std::string& tag);
  ~ToolRun();
  ToolRun(const ToolRun&) = delete;
  ToolRun& operator=(const ToolRun&) = delete;

  const std::string& path() const { return path_; }

  // Writes `content` to the folder's file `name`.
  absl::Status Write(const std::string& name, const std::string& content);
  // The folder's file `name`, empty when missing.
  std::string Read(const std::string& name) const;

  // Runs `program` (the environment variable `override_env` names another, when set) with `args` in the
  // folder, stderr to its file "stderr": the exit status, -1 when it could not be started, 128 when killed.
  int Run(const std::string& program, const char* override_env, const std::vector<std::string>& args);

 private:
  std::string path_;
};

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_TOOL_RUN_H_
