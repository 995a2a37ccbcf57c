// Process supervision mechanics (fork/exec, pipes, process groups, signals, exit codes). The ranks here are
// /bin/sh scripts on purpose: this unit is about handling processes, not about training.
#include "worker/agent/rank_process.h"

#include <signal.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"

namespace nmsparse::agent {
namespace {

struct Lines {
  std::mutex mu;
  std::vector<std::string> lines;
  LineCallback Sink() {
    return [this](absl::string_view line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.emplace_back(line);
    };
  }
};

RankCommand Shell(const std::string& script) {
  RankCommand command;
  command.argv = {"/bin/sh", "-c", script};
  command.env = {"PATH=/usr/bin:/bin", "GREETING=hello"};
  return command;
}

TEST(RankProcessTest, CollectsLinesAndExitCode) {
  Lines out, err;
  auto p = RankProcess::Start(Shell("echo one; echo $GREETING; printf 'no newline'; echo oops >&2; exit 3"),
                              out.Sink(), err.Sink());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)->Wait(), 3);
  EXPECT_EQ(out.lines, (std::vector<std::string>{"one", "hello", "no newline"}));
  EXPECT_EQ(err.lines, (std::vector<std::string>{"oops"}));
}

TEST(RankProcessTest, RunsInWorkingDirectory) {
  Lines out;
  RankCommand command = Shell("pwd");
  command.cwd = "/tmp";
  auto p = RankProcess::Start(command, out.Sink(), nullptr);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->Wait(), 0);
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0], "/tmp");
}

TEST(RankProcessTest, SignalReachesTheWholeGroup) {
  Lines out;
  // The shell starts a grandchild; SIGTERM to the group must end both, or Wait would hang on the pipe.
  auto p = RankProcess::Start(Shell("sleep 30 & echo started; wait"), out.Sink(), nullptr);
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard<std::mutex> lock(out.mu);
      if (!out.lines.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE((*p)->Poll().has_value());
  const auto start = std::chrono::steady_clock::now();
  (*p)->Signal(SIGTERM);
  EXPECT_EQ((*p)->Wait(), 128 + SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RankProcessTest, MissingProgramIsAnError) {
  RankCommand command;
  command.argv = {"/nonexistent/nmtrain"};
  auto p = RankProcess::Start(command, nullptr, nullptr);
  EXPECT_FALSE(p.ok());
  EXPECT_FALSE(ResolveProgram("surely-not-a-program-name").ok());
  EXPECT_TRUE(ResolveProgram("sh").ok());
}

TEST(RankProcessTest, ExitCodeOfSignalledProcess) {
  auto p = RankProcess::Start(Shell("kill -9 $$"), nullptr, nullptr);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->Wait(), 137);
}

}  // namespace
}  // namespace nmsparse::agent
