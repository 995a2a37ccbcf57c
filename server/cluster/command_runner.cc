#include "server/cluster/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nmsparse::server {
namespace {

// Reads what is ready on `fd` into `out`; false once the pipe is closed.
bool Drain(int fd, std::string* out) {
  char buffer[4096];
  const ssize_t n = read(fd, buffer, sizeof(buffer));
  if (n > 0) {
    out->append(buffer, static_cast<size_t>(n));
    return true;
  }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

}  // namespace

std::string CommandLine(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const std::string& a : argv) {
    words.push_back(a.find_first_of(" \t'\"$") == std::string::npos ? a : absl::StrCat("'", a, "'"));
  }
  return absl::StrJoin(words, " ");
}

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv, absl::Duration timeout) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0)
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);  // nmserver blocks SIGTERM for its sigwait.
    execvp(args[0], args.data());
    const int e = errno;
    (void)!write(exec_pipe[1], &e, sizeof(e));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  int exec_errno = 0;
  const bool exec_failed = read(exec_pipe[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno);
  close(exec_pipe[0]);

  CommandResult result;
  const absl::Time deadline = absl::Now() + timeout;
  bool out_open = true, err_open = true, timed_out = false;
  while (out_open || err_open) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(std::min<int64_t>(left_ms, 1000))) < 0 && errno != EINTR) break;
    if (out_open && fds[0].revents) out_open = Drain(out_pipe[0], &result.out);
    if (err_open && fds[1].revents) err_open = Drain(err_pipe[0], &result.err);
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exec_failed) {
    return absl::NotFoundError(absl::StrCat("cannot run ", argv[0], ": ", std::strerror(exec_errno)));
  }
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(CommandLine(argv), " did not finish within ", absl::FormatDuration(timeout)));
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace nmsparse::server
