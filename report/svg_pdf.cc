#include "report/svg_pdf.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/visible_text.h"

extern char** environ;

namespace nmsparse::report {
namespace {

constexpr const char* kFiles[] = {"figure.svg", "figure.pdf", "rsvg.err"};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// rsvg-convert -f pdf -o figure.pdf figure.svg in `dir`, stderr to dir/rsvg.err: its exit status, or -1 when
// it could not be started.
int RunRsvgConvert(const std::string& dir) {
  const char* override_path = std::getenv("NMSPARSE_RSVG_CONVERT");
  std::string program = override_path && *override_path ? override_path : "rsvg-convert";
  const std::string err = dir + "/rsvg.err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  std::string f = "-f", pdf = "pdf", o = "-o", out = kFiles[1], in = kFiles[0];
  char* argv[] = {program.data(), f.data(), pdf.data(), o.data(), out.data(), in.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

absl::StatusOr<std::string> SvgToPdf(const std::string& svg) {
  const char* base = std::getenv("TMPDIR");
  std::string dir = absl::StrCat(base && *base ? base : "/tmp", "/nmsparse-rsvg.XXXXXX");
  if (mkdtemp(dir.data()) == nullptr) return absl::InternalError("cannot create a temporary directory");
  {
    std::ofstream out(dir + "/" + kFiles[0], std::ios::binary | std::ios::trunc);
    out << svg;
  }
  const int rc = RunRsvgConvert(dir);
  const std::string pdf = ReadFile(dir + "/" + kFiles[1]);
  const std::string err = ReadFile(dir + "/" + kFiles[2]);
  for (const char* name : kFiles) unlink((dir + "/" + name).c_str());
  rmdir(dir.c_str());
  if (rc < 0) {
    return absl::FailedPreconditionError(
        "cannot run rsvg-convert: install Debian's librsvg2-bin (tools/bootstrap.sh) or set "
        "NMSPARSE_RSVG_CONVERT");
  }
  if (rc != 0 || pdf.rfind("%PDF", 0) != 0) {
    return absl::InternalError(absl::StrCat("rsvg-convert failed (exit ", rc, "): ", VisibleLines(err)));
  }
  return pdf;
}

}  // namespace nmsparse::report
