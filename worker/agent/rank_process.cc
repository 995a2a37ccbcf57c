#include "worker/agent/rank_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace nmsparse::agent {
namespace {

// Reads `fd` until EOF and hands out complete lines (a last unterminated line too). Closes `fd`.
void ReadLines(int fd, const LineCallback& on_line) {
  std::string pending;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
      absl::string_view line(pending.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (on_line) on_line(line);
      start = nl + 1;
    }
    pending.erase(0, start);
  }
  if (!pending.empty() && on_line) on_line(pending);
  close(fd);
}

// Writes errno to `fd` and leaves; only async-signal-safe calls, as this runs between fork and exec.
[[noreturn]] void ChildFail(int fd) {
  const int err = errno;
  ssize_t ignored = write(fd, &err, sizeof(err));
  (void)ignored;
  _exit(127);
}

}  // namespace

int ExitCodeOfWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

absl::StatusOr<std::string> ResolveProgram(const std::string& program) {
  if (program.empty()) return absl::InvalidArgumentError("empty program name");
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", program);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::NotFoundError(absl::StrCat("program '", program, "' not found in PATH"));
}

absl::StatusOr<std::unique_ptr<RankProcess>> RankProcess::Start(const RankCommand& command,
                                                                LineCallback on_stdout,
                                                                LineCallback on_stderr) {
  if (command.argv.empty()) return absl::InvalidArgumentError("empty command");
  NM_ASSIGN_OR_RETURN(std::string program, ResolveProgram(command.argv[0]));

  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls are allowed.
  std::vector<char*> argv;
  for (const std::string& a : command.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : command.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = getpid();

  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return absl::ErrnoToStatus(err, "pipe");
  }
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return absl::ErrnoToStatus(err, "pipe");
  }

  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1]}) close(fd);
    return absl::ErrnoToStatus(err, "fork");
  }
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(143);  // The agent died before prctl took effect.
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0) ChildFail(exec_pipe[1]);
    if (dup2(out_pipe[1], 1) < 0 || dup2(err_pipe[1], 2) < 0) ChildFail(exec_pipe[1]);
    if (!command.cwd.empty() && chdir(command.cwd.c_str()) != 0) ChildFail(exec_pipe[1]);
    execve(program.c_str(), argv.data(), envp.data());
    ChildFail(exec_pipe[1]);
  }

  setpgid(pid, pid);  // Also in the parent, so that signals to the group work before the child ran.
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(exec_pipe[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  close(exec_pipe[0]);
  auto process = std::unique_ptr<RankProcess>(
      new RankProcess(pid, out_pipe[0], err_pipe[0], std::move(on_stdout), std::move(on_stderr)));
  if (n == static_cast<ssize_t>(sizeof(child_errno))) {
    process->Wait();
    return absl::ErrnoToStatus(child_errno, absl::StrCat("cannot execute ", program));
  }
  return process;
}

RankProcess::RankProcess(pid_t pid, int stdout_fd, int stderr_fd, LineCallback on_stdout,
                         LineCallback on_stderr)
    : pid_(pid),
      stdout_reader_([stdout_fd, cb = std::move(on_stdout)] { ReadLines(stdout_fd, cb); }),
      stderr_reader_([stderr_fd, cb = std::move(on_stderr)] { ReadLines(stderr_fd, cb); }) {}

RankProcess::~RankProcess() {
  if (!exit_code_.has_value()) Signal(SIGKILL);
  Wait();
}

void RankProcess::Signal(int signal) {
  if (exit_code_.has_value()) return;
  kill(-pid_, signal);
}

std::optional<int> RankProcess::Poll() {
  if (exit_code_.has_value()) return exit_code_;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_code_ = ExitCodeOfWaitStatus(status);
  } else if (r < 0) {
    exit_code_ = -1;  // Not our child any more (reaped elsewhere): nothing left to wait for.
  }
  return exit_code_;
}

int RankProcess::Wait() {
  if (!exit_code_.has_value()) {
    int status = 0;
    pid_t r;
    do {
      r = waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    exit_code_ = r == pid_ ? ExitCodeOfWaitStatus(status) : -1;
  }
  FinishReaders();
  return *exit_code_;
}

void RankProcess::FinishReaders() {
  // Descendants the rank left behind could keep the pipes open; the group is gone with its leader's exit.
  kill(-pid_, SIGKILL);
  if (stdout_reader_.joinable()) stdout_reader_.join();
  if (stderr_reader_.joinable()) stderr_reader_.join();
}

}  // namespace nmsparse::agent
