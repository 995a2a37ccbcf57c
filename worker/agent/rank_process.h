// One trainer rank as an operating-system process: fork/exec into its own process group, stdout and stderr
// read line by line on two reader threads, signals sent to the whole group, exit status collected.
#ifndef NMSPARSE_WORKER_AGENT_RANK_PROCESS_H_
#define NMSPARSE_WORKER_AGENT_RANK_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nmsparse::agent {

struct RankCommand {
  std::vector<std::string> argv;  // argv[0] is the program; a name without '/' is looked up in PATH.
  std::vector<std::string> env;   // The complete environment, "KEY=VALUE" entries.
  std::string cwd;                // Empty: the agent's own.
};

// Receives one line without its trailing newline. Called from a reader thread.
using LineCallback = std::function<void(absl::string_view line)>;

// Exit code of a wait status as a shell reports it: the code, or 128 + signal number.
int ExitCodeOfWaitStatus(int status);

// Resolves a program name through PATH (names with a '/' are returned as they are).
absl::StatusOr<std::string> ResolveProgram(const std::string& program);

class RankProcess {
 public:
  // Starts the command. The child gets its own process group, an empty signal mask and default signal
  // handlers, stdin from /dev/null, and SIGTERM when the thread that started it dies (PR_SET_PDEATHSIG), so
  // call Start from a thread that outlives the process. Fails if the program cannot be executed.
  static absl::StatusOr<std::unique_ptr<RankProcess>> Start(const RankCommand& command,
                                                            LineCallback on_stdout, LineCallback on_stderr);

  RankProcess(const RankProcess&) = delete;
  RankProcess& operator=(const RankProcess&) = delete;
  // Kills the process group and reaps the process if it is still running.
  ~RankProcess();

  pid_t pid() const { return pid_; }

  // Sends `signal` to the rank's process group (a no-op once the rank was reaped).
  void Signal(int signal);

  // The exit code once the process has ended (reaping it), nullopt while it runs. Non-blocking.
  std::optional<int> Poll();

  // Blocks until the process has ended and both pipes are drained; returns the exit code.
  int Wait();

 private:
  RankProcess(pid_t pid, int stdout_fd, int stderr_fd, LineCallback on_stdout, LineCallback on_stderr);
  void FinishReaders();

  pid_t pid_;
  std::optional<int> exit_code_;
  std::thread stdout_reader_;
  std::thread stderr_reader_;
};

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_RANK_PROCESS_H_
