// nmworker's Agent against the real coordinator (NmServer in process, SQLite in a temporary directory) with a
// fake trainer: a /bin/sh script that speaks nmtrain's process protocol (JSON lines, checkpoints in --out,
// --resume, exit codes). The fake keeps these tests about the agent and the service protocol - registration,
// assignments, reports, cancellation, failures, coordinator restarts, requeue with resume - and fast; the
// end-to-end test with the real nmtrain is tests/service_e2e_test.sh.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nmsparse/v1/coordinator.grpc.pb.h"
#include "server/nm_server.h"
#include "worker/agent/agent.h"

namespace nmsparse {
namespace {

// epochs and behaviour come from the spec file; a checkpoint file holds the last finished epoch.
constexpr char kFakeTrainer[] = R"(#!/bin/sh
spec=""; out=""; resume=0
while [ $# -gt 0 ]; do
  case "$1" in --spec) spec="$2"; shift;; --out) out="$2"; shift;; --resume) resume=1;; esac; shift
done
epochs=$(sed -n 's/^epochs: *//p' "$spec")
behaviour=$(sed -n 's/^behaviour: *//p' "$spec")
echo $$ > "$out/pid.$RANK"
start=0
if [ "$resume" = 1 ] && [ -f "$out/ckpt" ]; then start=$(cat "$out/ckpt"); echo "resuming from checkpoint at epoch $start"; fi
[ "$behaviour" = fail ] && { echo "diverged: loss is nan" >&2; exit 4; }
e=$start
while [ "$e" -lt "$epochs" ]; do
  e=$((e + 1))
  sleep "${FAKE_EPOCH_SECONDS:-0.05}"
  [ "$RANK" = 0 ] && echo "{\"kind\":\"epoch\",\"epoch\":$e,\"step\":$((e * 10)),\"loss\":$((10 - e)).5,\"phase\":\"sparse\"}"
  echo "$e" > "$out/ckpt"
done
[ "$RANK" = 0 ] && echo "{\"kind\":\"final\",\"epoch\":$epochs,\"step\":$((epochs * 10)),\"top1\":$((50 + epochs)).25}"
exit 0
)";

std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  static int counter = 0;
  std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/agent_coord_", getpid(), "_", counter++);
  mkdir(dir.c_str(), 0755);
  return dir;
}

// A test expander: one run per value of the first grid axis; the value's "behaviour" and "epochs" keys make
// the fake trainer's spec.
absl::StatusOr<std::vector<server::NewRun>> Expand(const v1::SweepSpec& spec) {
  std::vector<server::NewRun> runs;
  for (const v1::AxisValue& value : spec.grid(0).values()) {
    server::NewRun& run = runs.emplace_back();
    run.index = static_cast<uint32_t>(runs.size() - 1);
    run.labels = {{spec.grid(0).name(), value.label()}};
    auto get = [&](const std::string& key, const std::string& fallback) {
      auto it = value.set().find(key);
      return it == value.set().end() ? fallback : it->second;
    };
    run.resolved_spec =
        absl::StrCat("epochs: ", get("epochs", "3"), "\nbehaviour: ", get("behaviour", "ok"), "\n");
    run.content_hash = absl::StrCat(spec.name(), "-", value.label());
    run.gpus = 1;
  }
  return runs;
}

class AgentCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir();
    trainer_ = dir_ + "/fake_nmtrain.sh";
    std::ofstream(trainer_) << kFakeTrainer;
    chmod(trainer_.c_str(), 0755);
    StartServer(0);
  }

  void TearDown() override {
    for (auto& agent : agents_) agent->Shutdown(std::chrono::milliseconds(500));
    agents_.clear();
    if (server_) server_->Shutdown();
  }

  void StartServer(int port) {
    server::ServerOptions options;
    options.listen = absl::StrCat("127.0.0.1:", port);
    options.db_path = dir_ + "/nmsparse.db";
    options.lease_ms = 1000;
    options.grace_ms = 500;
    options.schedule_interval_ms = 100;
    options.expand = Expand;
    auto server = server::NmServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    address_ = server_->address();
    stub_ = v1::Coordinator::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

  agent::Agent* StartAgent(const std::string& name,
                           const std::function<void(agent::AgentOptions*)>& adjust = nullptr) {
    agent::AgentOptions options;
    options.host = name;
    options.work_dir = dir_ + "/work";  // Shared by every agent, as a shared filesystem would be.
    options.trainer = trainer_;
    options.slots = *agent::BuildSlots("none", 1, {});
    options.kill_grace = std::chrono::milliseconds(1000);
    options.max_backoff = std::chrono::milliseconds(300);
    if (adjust) adjust(&options);
    agents_.push_back(
        std::make_unique<agent::Agent>(options, std::make_unique<agent::CoordinatorClient>(address_)));
    agents_.back()->Start();
    return agents_.back().get();
  }

  int64_t Submit(const std::string& name, const std::vector<std::pair<std::string, std::string>>& values,
                 uint32_t max_retries = 0) {
    v1::SubmitSweepRequest request;
    request.mutable_spec()->set_name(name);
    request.mutable_spec()->set_max_retries(max_retries);
    v1::GridAxis* axis = request.mutable_spec()->add_grid();
    axis->set_name("case");
    for (const auto& [label, behaviour] : values) {
      v1::AxisValue* value = axis->add_values();
      value->set_label(label);
      (*value->mutable_set())["behaviour"] = behaviour;
      if (behaviour == "slow") (*value->mutable_set())["epochs"] = "40";
    }
    grpc::ClientContext context;
    v1::SubmitSweepResponse response;
    grpc::Status status = stub_->SubmitSweep(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.sweep().id();
  }

  std::vector<v1::Run> Runs(int64_t sweep_id) {
    v1::ListRunsRequest request;
    request.set_sweep_id(sweep_id);
    v1::ListRunsResponse response;
    grpc::ClientContext context;
    if (!stub_->ListRuns(&context, request, &response).ok()) return {};
    return {response.runs().begin(), response.runs().end()};
  }

  v1::GetRunResponse GetRun(int64_t run_id) {
    v1::GetRunRequest request;
    request.set_run_id(run_id);
    request.set_include_metrics(true);
    v1::GetRunResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(stub_->GetRun(&context, request, &response).ok());
    return response;
  }

  // Polls until `done` holds for the sweep's runs or the timeout passes.
  bool WaitFor(int64_t sweep_id, const std::function<bool(const std::vector<v1::Run>&)>& done,
               std::chrono::seconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::vector<v1::Run> runs = Runs(sweep_id);
      if (!runs.empty() && done(runs)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  static bool AllIn(const std::vector<v1::Run>& runs, v1::RunState state) {
    for (const v1::Run& r : runs) {
      if (r.state() != state) return false;
    }
    return true;
  }

  std::string Logs(int64_t run_id) {
    v1::GetLogsRequest request;
    request.set_run_id(run_id);
    v1::GetLogsResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(stub_->GetLogs(&context, request, &response).ok());
    std::string text;
    for (const v1::LogLine& line : response.lines()) absl::StrAppend(&text, line.text(), "\n");
    return text;
  }

  pid_t TrainerPid(int64_t run_id) {
    std::ifstream in(absl::StrCat(dir_, "/work/runs/", run_id, "/pid.0"));
    pid_t pid = 0;
    in >> pid;
    return pid;
  }

  std::string dir_, trainer_, address_;
  std::unique_ptr<server::NmServer> server_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
  std::vector<std::unique_ptr<agent::Agent>> agents_;
};

int CountKind(const v1::GetRunResponse& run, const std::string& kind) {
  int n = 0;
  for (const v1::MetricPoint& p : run.metrics()) n += p.kind() == kind;
  return n;
}

TEST_F(AgentCoordinatorTest, RunsSucceedWithMetricsLogsAndFinalMetrics) {
  StartAgent("a");
  const int64_t sweep = Submit("ok", {{"x", "ok"}, {"y", "ok"}});
  ASSERT_TRUE(WaitFor(sweep, [](const auto& runs) { return AllIn(runs, v1::SUCCEEDED); }));
  for (const v1::Run& run : Runs(sweep)) {
    const v1::GetRunResponse full = GetRun(run.id());
    EXPECT_DOUBLE_EQ(full.run().final_metrics().at("top1"), 53.25);
    EXPECT_EQ(CountKind(full, "epoch"), 3);
    EXPECT_EQ(CountKind(full, "final"), 1);
    EXPECT_EQ(full.metrics(0).labels().at("phase"), "sparse");
    EXPECT_EQ(full.run().attempt(), 1u);
  }
}

// A worker leaving (Slurm's USR1 before the time limit) hands its run back: requeued without a retry (the
// sweep allows none), and resumed from the checkpoint by the next worker.
TEST_F(AgentCoordinatorTest, LeavingHandsTheRunBackWithoutUsingARetry) {
  agent::Agent* leaving = StartAgent("job-1", [](agent::AgentOptions* o) { o->job = "slurm:41"; });
  const int64_t sweep = Submit("leave", {{"x", "slow"}}, /*max_retries=*/0);
  ASSERT_TRUE(WaitFor(sweep, [](const auto& runs) { return AllIn(runs, v1::RUNNING); }));
  const int64_t run_id = Runs(sweep)[0].id();
  ASSERT_TRUE(WaitFor(sweep, [&](const auto&) { return CountKind(GetRun(run_id), "epoch") >= 2; }));
  v1::ListWorkersResponse workers;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->ListWorkers(&context, v1::ListWorkersRequest(), &workers).ok());
  }
  ASSERT_EQ(workers.workers_size(), 1);
  EXPECT_EQ(workers.workers(0).job(), "slurm:41");

  leaving->Leave("test");
  const v1::Run handed_back = Runs(sweep)[0];
  EXPECT_EQ(handed_back.state(), v1::QUEUED) << handed_back.message();
  bool said = false;
  const v1::GetRunResponse after = GetRun(run_id);
  for (const v1::StateChange& change : after.history()) {
    said |= absl::StrContains(change.reason(), "handed back by its worker") &&
            absl::StrContains(change.reason(), "no retry used");
  }
  EXPECT_TRUE(said);

  StartAgent("job-2");
  ASSERT_TRUE(WaitFor(sweep, [](const auto& runs) { return AllIn(runs, v1::SUCCEEDED); }));
  // max_retries is 0: success proves that no retry was spent. Until the coordinator sees the leaving worker's
  // stream close (it looks every 200 ms), it may place the handed-back run there once more; that attempt is
  // handed back unstarted, also free, so the attempt that succeeds is the second or the third.
  const uint32_t attempt = Runs(sweep)[0].attempt();
  EXPECT_TRUE(attempt == 2u || attempt == 3u) << attempt;
  const v1::GetRunResponse done = GetRun(run_id);
  for (const v1::StateChange& change : done.history()) {
    EXPECT_FALSE(absl::StrContains(change.reason(), "requeued (retry")) << change.reason();
  }
  EXPECT_TRUE(absl::StrContains(Logs(run_id), "resuming from checkpoint"));
}

// With --idle_exit_ms, a worker without runs asks to leave; while it has a run it does not.
TEST_F(AgentCoordinatorTest, IdleWorkerAsksToLeave) {
  agent::Agent* idle =
      StartAgent("idle", [](agent::AgentOptions* o) { o->idle_exit = std::chrono::milliseconds(300); });
  const auto started = std::chrono::steady_clock::now();
  const agent::ExitRequest request = idle->WaitForExitRequest();
  EXPECT_EQ(request.kind, agent::ExitKind::kLeave);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(300));
  EXPECT_TRUE(absl::StrContains(request.why, "no run for")) << request.why;
}

// A registration the coordinator refuses for good (an advertised address naming no host) is not retried: the
// agent asks to exit, naming the coordinator's reason, and registers no worker.
TEST_F(AgentCoordinatorTest, RefusedRegistrationEndsTheAgentInsteadOfRetrying) {
  agent::Agent* refused = StartAgent("wild", [](agent::AgentOptions* o) { o->advertise_addr = "0.0.0.0"; });
  const agent::ExitRequest request = refused->WaitForExitRequest();
  EXPECT_EQ(request.kind, agent::ExitKind::kRefused);
  EXPECT_TRUE(absl::StrContains(request.why, "refused this worker's registration: INVALID_ARGUMENT: "))
      << request.why;
  EXPECT_TRUE(absl::StrContains(request.why, "advertise_addr: '0.0.0.0'")) << request.why;
  v1::ListWorkersResponse workers;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->ListWorkers(&context, v1::ListWorkersRequest(), &workers).ok());
  EXPECT_EQ(workers.workers_size(), 0);
}

TEST_F(AgentCoordinatorTest, TrainerFailureIsReportedWithExitCodeAndStderr) {
  StartAgent("a");
  const int64_t sweep = Submit("fail", {{"x", "fail"}});
  ASSERT_TRUE(WaitFor(sweep, [](const auto& runs) { return AllIn(runs, v1::FAILED); }));
  const v1::Run run = Runs(sweep)[0];
  EXPECT_TRUE(absl::StrContains(run.message(), "exited with code 4 (training error)")) << run.message();
  EXPECT_TRUE(absl::StrContains(run.message(), "diverged: loss is nan")) << run.message();
  EXPECT_TRUE(absl::StrContains(Logs(run.id()), "diverged: loss is nan"));
}

TEST_F(AgentCoordinatorTest, CancelStopsTheTrainer) {
  StartAgent("a");
  const int64_t sweep = Submit("cancel", {{"x", "slow"}});
  ASSERT_TRUE(WaitFor(sweep, [](const auto& runs) { return AllIn(runs, v1::RUNNING); }));
  const int64_t run_id = Runs(sweep)[0].id();
  pid_t pid = 0;
  for (int i = 0; i < 100 && pid == 0; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(20))) {
    pid = TrainerPid(run_id);
  }
  ASSERT_GT(pid, 0);
  v1::CancelRunRequest request;
  request.set_run_id(run_id);
  v1::CancelRunResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->CancelRun(&context, request, &response).ok());
  ASSERT_TRUE(WaitFor(sweep, [](const auto& runs) { return AllIn(runs, v1::CANCELLED); }));
  EXPECT_NE(kill(pid, 0), 0) << "trainer " << pid << " still runs";
}

TEST_F(AgentCoordinatorTest, CoordinatorRestartMidRunLosesNothing) {
  setenv("FAKE_EPOCH_SECONDS", "0.2", 1);
  StartAgent("a");
  const int64_t sweep = Submit("restart", {{"x", "ok"}, {"y", "ok"}});
  ASSERT_TRUE(WaitFor(sweep, [](const auto& runs) { return runs[0].state() == v1::RUNNING; }));
  const int port = server_->port();
  server_->Shutdown();
  server_.reset();
  std::this_thread::sleep_for(
      std::chrono::milliseconds(700));  // The run goes on; reports wait in the outbox.
  StartServer(port);
  ASSERT_TRUE(WaitFor(
      sweep, [](const auto& runs) { return AllIn(runs, v1::SUCCEEDED); }, std::chrono::seconds(30)));
  unsetenv("FAKE_EPOCH_SECONDS");
  for (const v1::Run& run : Runs(sweep)) {
    const v1::GetRunResponse full = GetRun(run.id());
    EXPECT_EQ(full.run().attempt(), 1u) << "run " << run.id() << " was requeued";
    EXPECT_EQ(CountKind(full, "final"), 1);
    EXPECT_GE(CountKind(full, "epoch"), 3);
    EXPECT_DOUBLE_EQ(full.run().final_metrics().at("top1"), 53.25);
  }
}

TEST_F(AgentCoordinatorTest, StoppedAgentsRunIsRequeuedAndResumedByAnother) {
  setenv("FAKE_EPOCH_SECONDS", "0.1", 1);
  agent::Agent* first = StartAgent("a");
  const int64_t sweep = Submit("requeue", {{"x", "slow"}}, /*max_retries=*/2);
  ASSERT_TRUE(WaitFor(sweep, [](const auto& runs) { return AllIn(runs, v1::RUNNING); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // A few epochs, with checkpoints.
  first->Shutdown(std::chrono::milliseconds(2000));
  StartAgent("b");
  ASSERT_TRUE(WaitFor(
      sweep, [](const auto& runs) { return AllIn(runs, v1::SUCCEEDED); }, std::chrono::seconds(30)));
  unsetenv("FAKE_EPOCH_SECONDS");
  const int64_t run_id = Runs(sweep)[0].id();
  const v1::GetRunResponse full = GetRun(run_id);
  // Attempt 2 may still go to the stopped agent (alive until its lease runs out); a later one resumes.
  EXPECT_GE(full.run().attempt(), 2u);
  EXPECT_TRUE(absl::StrContains(Logs(run_id), "resuming from")) << Logs(run_id);
  EXPECT_EQ(CountKind(full, "final"), 1);
  EXPECT_DOUBLE_EQ(full.run().final_metrics().at("top1"), 90.25);
}

}  // namespace
}  // namespace nmsparse
