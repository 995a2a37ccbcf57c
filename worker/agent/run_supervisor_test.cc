// Run supervision with fake trainers: small /bin/sh scripts stand in for nmtrain because this unit is about
// process handling (rank environment, metric/log routing, kill-on-rank-death, outcomes), not about training.
#include "worker/agent/run_supervisor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "contract/nmtrain_exit_codes.h"
#include "gtest/gtest.h"

namespace nmsparse::agent {
namespace {

class RunSupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp ? tmp : "/tmp", "/sup_", getpid(), "_", counter_++);
  }

  // A fake nmtrain: a shell script receiving nmtrain's arguments.
  std::string FakeTrainer(const std::string& body) {
    const std::string path = dir_ + "_trainer.sh";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }

  RunOutcome Run(const std::string& trainer, int ranks, StopReason stop_after_start = StopReason::kNone) {
    return Run(trainer, std::vector<RankDevice>(ranks), stop_after_start);
  }

  RunOutcome Run(const std::string& trainer, const std::vector<RankDevice>& ranks,
                 StopReason stop_after_start = StopReason::kNone) {
    RunLaunch launch;
    launch.run_id = 7;
    launch.attempt = 2;
    launch.spec_yaml = "name: test\n";
    launch.run_dir = dir_ + "/runs/7";
    launch.trainer = trainer;
    launch.ranks = ranks;
    launch.kill_grace = std::chrono::milliseconds(500);
    std::mutex mu;
    std::condition_variable cv;
    bool started = false, finished = false;
    RunOutcome outcome;
    RunCallbacks callbacks;
    callbacks.on_started = [&] {
      std::lock_guard<std::mutex> lock(mu);
      started = true;
      cv.notify_all();
    };
    callbacks.on_metric = [&](v1::MetricPoint p) {
      std::lock_guard<std::mutex> lock(mu);
      metrics_.push_back(std::move(p));
    };
    callbacks.on_log = [&](uint32_t rank, absl::string_view line) {
      std::lock_guard<std::mutex> lock(mu);
      logs_.push_back(absl::StrCat(rank, ":", line));
    };
    callbacks.on_done = [&](const RunOutcome& o) {
      std::lock_guard<std::mutex> lock(mu);
      outcome = o;
      finished = true;
    };
    RunSupervisor supervisor(launch, callbacks);
    supervisor.Start();
    if (stop_after_start != StopReason::kNone) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return started; });
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      supervisor.Stop(stop_after_start);
    }
    supervisor.Join();
    EXPECT_TRUE(finished);
    EXPECT_TRUE(supervisor.done());
    return outcome;
  }

  static int counter_;
  std::string dir_;
  std::vector<v1::MetricPoint> metrics_;
  std::vector<std::string> logs_;
};

int RunSupervisorTest::counter_ = 0;

TEST_F(RunSupervisorTest, SuccessfulRunRoutesMetricsAndLogs) {
  const std::string trainer = FakeTrainer(R"(
test "$1" = --spec || exit 9
grep -q 'name: test' "$2" || exit 8
test "$3" = --out && test "$5" = --resume || exit 7
test "$6 $7" = "--device cpu" || exit 6
echo "starting rank $RANK of $WORLD_SIZE on [$CUDA_VISIBLE_DEVICES] port $MASTER_PORT"
echo '{"kind":"epoch","epoch":1,"step":10,"loss":0.5,"phase":"dense"}'
echo '{"kind":"final","epoch":1,"step":10,"top1":42.5}'
echo 'a warning' >&2
)");
  const RunOutcome outcome = Run(trainer, 1);
  EXPECT_EQ(outcome.state, v1::SUCCEEDED) << outcome.message;
  EXPECT_TRUE(outcome.report);
  ASSERT_EQ(metrics_.size(), 2u);
  EXPECT_EQ(metrics_[0].run_id(), 7);
  EXPECT_EQ(metrics_[0].attempt(), 2u);
  EXPECT_EQ(metrics_[0].labels().at("phase"), "dense");
  EXPECT_EQ(metrics_[1].kind(), "final");
  EXPECT_EQ(metrics_[1].values().at("top1"), 42.5);
  ASSERT_EQ(logs_.size(), 2u);
  // stdout and stderr come through separate pipes: their lines' relative order is not defined.
  const size_t start = logs_[0] == "0:a warning" ? 1 : 0;
  EXPECT_TRUE(absl::StartsWith(logs_[start], "0:starting rank 0 of 1 on [] port ")) << logs_[start];
  EXPECT_EQ(logs_[1 - start], "0:a warning");
}

// A run on GPU slots whose trainer reports the CPU (a CPU-only nmtrain, say) is an error, not a slow success.
TEST_F(RunSupervisorTest, GpuRunThatTrainedOnTheCpuFails) {
  const std::string trainer = FakeTrainer(R"(
test "$6 $7" = "--device cuda" || exit 6
echo "{\"kind\":\"final\",\"epoch\":1,\"step\":10,\"top1\":0.5,\"device\":\"$FAKE_DEVICE\"}"
)");
  setenv("FAKE_DEVICE", "cpu", 1);
  RunOutcome outcome = Run(trainer, {RankDevice{0}, RankDevice{2}});
  EXPECT_EQ(outcome.state, v1::FAILED);
  EXPECT_NE(outcome.message.find("placed on GPU slots but rank 0 reported device 'cpu'"), std::string::npos)
      << outcome.message;
  setenv("FAKE_DEVICE", "cuda:0 NVIDIA H100 80GB HBM3", 1);
  outcome = Run(trainer, {RankDevice{0}, RankDevice{2}});
  EXPECT_EQ(outcome.state, v1::SUCCEEDED) << outcome.message;
  unsetenv("FAKE_DEVICE");
}

TEST_F(RunSupervisorTest, RunMixingGpuAndCpuSlotsIsRefused) {
  const RunOutcome outcome = Run(FakeTrainer("exit 0"), {RankDevice{1}, RankDevice{-1}});
  EXPECT_EQ(outcome.state, v1::FAILED);
  EXPECT_NE(outcome.message.find("must all train on GPUs or all on the CPU"), std::string::npos)
      << outcome.message;
}

TEST_F(RunSupervisorTest, OnlyRankZeroPrintsMetrics) {
  const std::string trainer = FakeTrainer(R"(echo "{\"kind\":\"epoch\",\"epoch\":1,\"rank\":$RANK}")");
  const RunOutcome outcome = Run(trainer, 2);
  EXPECT_EQ(outcome.state, v1::SUCCEEDED);
  ASSERT_EQ(metrics_.size(), 1u);
  EXPECT_EQ(metrics_[0].values().at("rank"), 0.0);
  ASSERT_EQ(logs_.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(logs_[0], "1:{")) << logs_[0];
}

TEST_F(RunSupervisorTest, RankDeathStopsTheOthers) {
  // Rank 1 fails at once; rank 0 would sleep for a minute, and ignores SIGTERM so that SIGKILL is needed.
  const std::string trainer = FakeTrainer(R"(
if [ "$RANK" = 1 ]; then echo 'c10d: peer gone' >&2; exit 5; fi
trap '' TERM
sleep 60 &
wait
sleep 60
)");
  const auto start = std::chrono::steady_clock::now();
  const RunOutcome outcome = Run(trainer, 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(outcome.state, v1::FAILED);
  EXPECT_EQ(outcome.exit_code, 5);
  EXPECT_NE(outcome.message.find("rank 1 exited with code 5 (distributed failure)"), std::string::npos)
      << outcome.message;
  EXPECT_NE(outcome.message.find("c10d: peer gone"), std::string::npos) << outcome.message;
}

TEST_F(RunSupervisorTest, CancelEndsRunAsCancelled) {
  const RunOutcome outcome = Run(FakeTrainer("sleep 60"), 2, StopReason::kCancel);
  EXPECT_EQ(outcome.state, v1::CANCELLED);
  EXPECT_TRUE(outcome.report);
}

TEST_F(RunSupervisorTest, StaleAttemptIsNotReported) {
  const RunOutcome outcome = Run(FakeTrainer("sleep 60"), 1, StopReason::kStale);
  EXPECT_FALSE(outcome.report);
}

TEST_F(RunSupervisorTest, MissingTrainerFails) {
  const RunOutcome outcome = Run(dir_ + "/no-such-nmtrain", 1);
  EXPECT_EQ(outcome.state, v1::FAILED);
  EXPECT_NE(outcome.message.find("cannot start rank 0"), std::string::npos) << outcome.message;
}

TEST(DescribeExitTest, DocumentedCodes) {
  EXPECT_EQ(contract::DescribeExit(2), "bad spec");
  EXPECT_EQ(contract::DescribeExit(143), "terminated (SIGTERM)");
  EXPECT_EQ(contract::DescribeExit(130), "killed by signal 2");
}

TEST(PickFreePortTest, ReturnsAPort) {
  const int port = RunSupervisor::PickFreePort();
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
}

// A port another process listens on is taken; once it is closed the port is free again, TIME_WAIT or not.
TEST(PortFreeTest, ATakenPortIsSeenAndAFreedOneIsFree) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  EXPECT_FALSE(RunSupervisor::PortFree(port));
  close(fd);
  EXPECT_TRUE(RunSupervisor::PortFree(port));
}

}  // namespace
}  // namespace nmsparse::agent
