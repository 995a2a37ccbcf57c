// nmctl export-model's receiving end: it writes the chunks the coordinator relays into the output directory,
// each file first as DIR/.NAME.partial, and renames them all only once every file of the export
// (contract/model_export_files.h) has arrived whole with a matching SHA-256, so that an interrupted or
// damaged export never leaves a file that looks complete. A file name is checked against the export's list
// before it touches the filesystem: nothing a coordinator sends can name a path.
#ifndef NMSPARSE_CLI_MODEL_EXPORT_RECEIVER_H_
#define NMSPARSE_CLI_MODEL_EXPORT_RECEIVER_H_

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/sha256_stream.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::cli {

class ModelExportReceiver {
 public:
  // `dir` must exist. `run_id` is named in errors.
  ModelExportReceiver(std::string dir, int64_t run_id);
  // Removes the partial files unless Commit succeeded.
  ~ModelExportReceiver();

  absl::Status Take(const v1::ModelFileChunk& chunk);
  // Every file complete and verified: renamed into place.
  absl::Status Commit();

  // Bytes of each file received so far.
  const std::map<std::string, int64_t>& sizes() const { return sizes_; }

 private:
  std::string Partial(const std::string& file) const;

  const std::string dir_;
  const int64_t run_id_;
  std::string current_;  // The file being received ("" between files).
  std::ofstream out_;
  Sha256Stream sha_;
  int64_t total_ = 0;
  std::map<std::string, int64_t> sizes_;
  std::map<std::string, bool> complete_;
  bool committed_ = false;
};

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_MODEL_EXPORT_RECEIVER_H_
