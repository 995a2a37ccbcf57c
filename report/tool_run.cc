#include "report/tool_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace nmsparse::report {

ToolRun::ToolRun(const std::string& tag) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(base && *base ? base : "/tmp", "/nmsparse-", tag, ".XXXXXX");
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

ToolRun::~ToolRun() {
  if (path_.empty()) return;
  // The tool writes only plain files here (no sub-folders): remove each, then the folder.
  if (DIR* d = opendir(path_.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") unlink((path_ + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(path_.c_str());
}

absl::Status ToolRun::Write(const std::string& name, const std::string& content) {
  const std::string file = path_ + "/" + name;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out.good()) return absl::InternalError(absl::StrCat("cannot write ", file));
  return absl::OkStatus();
}

std::string ToolRun::Read(const std::string& name) const {
  std::ifstream in(path_ + "/" + name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int ToolRun::Run(const std::string& program, const char* override_env, const std::vector<std::string>& args) {
  const char* override_path = std::getenv(override_env);
  std::string chosen = override_path && *override_path ? override_path : program;
  const std::string err = path_ + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addchdir_np(&actions, path_.c_str());
  std::vector<std::string> owned = {chosen};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, chosen.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace nmsparse::report
