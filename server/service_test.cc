// The Coordinator and WorkerGateway services over a real channel to an in-process nmserver.
#include <limits>
#include <set>

#include "common/version.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::Attempt;
using testing::CountRows;
using testing::FakeWorker;
using testing::GatewayComplete;
using testing::GatewayStart;
using testing::GridExpand;
using testing::MSweep;
using testing::ReportEpoch;
using testing::TempDbPath;
using testing::TestServer;

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { db_ = TempDbPath(::testing::UnitTest::GetInstance()->current_test_info()->name()); }

  grpc::Status Submit(const v1::SweepSpec& spec, v1::SubmitSweepResponse* resp, bool dry_run = false) {
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = spec;
    req.set_dry_run(dry_run);
    grpc::ClientContext ctx;
    return server_->coordinator().SubmitSweep(&ctx, req, resp);
  }

  v1::Run GetRun(int64_t id, v1::GetRunResponse* full = nullptr) {
    v1::GetRunRequest req;
    req.set_run_id(id);
    req.set_include_metrics(true);
    v1::GetRunResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = server_->coordinator().GetRun(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (full) *full = resp;
    return resp.run();
  }

  std::vector<v1::Run> ListRuns(int64_t sweep) {
    v1::ListRunsRequest req;
    req.set_sweep_id(sweep);
    v1::ListRunsResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(server_->coordinator().ListRuns(&ctx, req, &resp).ok());
    return {resp.runs().begin(), resp.runs().end()};
  }

  grpc::Status Start(const v1::RunAttempt& ra) { return GatewayStart(server_->gateway(), ra); }

  grpc::Status Complete(const v1::RunAttempt& ra, v1::RunState outcome, double top1 = 0.5) {
    return GatewayComplete(server_->gateway(), ra, outcome, /*exit_code=*/0, top1);
  }

  grpc::Status Report(const v1::RunAttempt& ra, int epoch, double loss) {
    return ReportEpoch(server_->gateway(), ra, epoch, {{"loss", loss}});
  }

  grpc::Status Heartbeat(int64_t worker, std::vector<v1::RunAttempt> running, v1::HeartbeatResponse* resp) {
    v1::HeartbeatRequest req;
    req.set_worker_id(worker);
    for (auto& ra : running) *req.add_running() = ra;
    grpc::ClientContext ctx;
    testing::AsWorker(&ctx, req.worker_id());
    return server_->gateway().Heartbeat(&ctx, req, resp);
  }

  grpc::Status CancelSweep(int64_t sweep_id, v1::CancelSweepResponse* resp) {
    v1::CancelSweepRequest req;
    req.set_sweep_id(sweep_id);
    grpc::ClientContext ctx;
    return server_->coordinator().CancelSweep(&ctx, req, resp);
  }

  // Polls until the run reaches `state` (at most ~5 s).
  v1::Run WaitState(int64_t id, v1::RunState state) {
    v1::Run r;
    for (int i = 0; i < 250; ++i) {
      r = GetRun(id);
      if (r.state() == state) break;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return r;
  }

  std::string db_;
  std::unique_ptr<TestServer> server_;
};

TEST_F(ServiceTest, SubmitStoresRunsQueuedWithQueuePositions) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("m-sweep", {"4", "8", "16"}), &resp).ok());
  EXPECT_FALSE(resp.existing());
  ASSERT_EQ(resp.runs_size(), 3);
  EXPECT_EQ(resp.sweep().run_counts().at("QUEUED"), 3u);
  EXPECT_EQ(resp.runs(1).labels().at("m"), "8");
  std::vector<v1::Run> runs = ListRuns(resp.sweep().id());
  ASSERT_EQ(runs.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(runs[i].index(), static_cast<uint32_t>(i));
    EXPECT_EQ(runs[i].queue_position(), i + 1);
  }
  v1::Run full = GetRun(runs[2].id());
  EXPECT_NE(full.resolved_spec().find("m_sparsity: 16"), std::string::npos) << full.resolved_spec();
  EXPECT_FALSE(full.resolved_spec().empty());
}

// Wire version 1's nmctl named no version and sent a sweep's base as an ExperimentSpec message (field 2 of
// v1.SweepSpec, now reserved); a caller naming another version is refused on any call. Both refusals name
// both versions, and every answer carries nmserver's.
TEST_F(ServiceTest, OtherWireVersionsAreRefusedNamingBoth) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SweepSpec old = MSweep("old", {"4"});
  old.clear_base();
  const std::string model_section("\x12\x15\x0a\x13vit_micro_patch4_28", 23);  // {model: {name: ...}}
  old.GetReflection()->MutableUnknownFields(&old)->AddLengthDelimited(2, model_section);
  v1::SubmitSweepResponse resp;
  grpc::Status s = Submit(old, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), WireVersionMismatch(1, kWireVersion));
  EXPECT_NE(s.error_message().find("nmctl speaks wire version 1 and nmserver speaks wire version 2"),
            std::string::npos);

  v1::ListSweepsRequest list;
  v1::ListSweepsResponse sweeps;
  grpc::ClientContext newer;
  newer.AddMetadata(kWireVersionMetadata, "3");
  s = server_->coordinator().ListSweeps(&newer, list, &sweeps);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), WireVersionMismatch(3, kWireVersion));

  grpc::ClientContext same;
  same.AddMetadata(kWireVersionMetadata, std::to_string(kWireVersion));
  ASSERT_TRUE(server_->coordinator().ListSweeps(&same, list, &sweeps).ok());
  const auto& answer = same.GetServerInitialMetadata();
  auto it = answer.find(kWireVersionMetadata);
  ASSERT_NE(it, answer.end());
  EXPECT_EQ(std::string(it->second.data(), it->second.size()), std::to_string(kWireVersion));
  server_->Stop();
  EXPECT_EQ(CountRows(db_, "sweeps"), 0);
}

TEST_F(ServiceTest, SameIdempotencyKeyReturnsTheFirstSweep) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SweepSpec spec = MSweep("once", {"4", "8"});
  spec.set_idempotency_key("key-1");
  v1::SubmitSweepResponse first, second;
  ASSERT_TRUE(Submit(spec, &first).ok());
  ASSERT_TRUE(Submit(spec, &second).ok());
  EXPECT_TRUE(second.existing());
  EXPECT_EQ(second.sweep().id(), first.sweep().id());
  EXPECT_EQ(second.sweep().name(), "once");
  ASSERT_EQ(second.runs_size(), 2);
  EXPECT_EQ(second.runs(0).id(), first.runs(0).id());
  // The same key with another spec is a mistake to hear of (issue 36), not the first sweep in silence.
  spec.set_name("renamed");
  v1::SubmitSweepResponse third;
  const grpc::Status other = Submit(spec, &third);
  EXPECT_EQ(other.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(other.error_message(), "idempotency key 'key-1' was used for sweep " +
                                       std::to_string(first.sweep().id()) +
                                       " with another spec; use a new key for a different sweep");
  server_->Stop();
  EXPECT_EQ(CountRows(db_, "sweeps"), 1);
  EXPECT_EQ(CountRows(db_, "runs"), 2);
}

TEST_F(ServiceTest, InvalidSpecIsRefusedAndLeavesNoTrace) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SweepSpec spec = MSweep("bad", {"4"});
  spec.set_base("resources: {gpus: 1}\n");  // No model.
  spec.set_idempotency_key("bad-key");
  v1::SubmitSweepResponse resp;
  grpc::Status s = Submit(spec, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("model.name"), std::string::npos) << s.error_message();
  server_->Stop();
  for (const char* table : {"sweeps", "runs", "run_labels", "state_changes"}) {
    EXPECT_EQ(CountRows(db_, table), 0) << table;
  }
}

TEST_F(ServiceTest, DryRunReturnsTheExpansionAndStoresNothing) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("dry", {"4", "8"}), &resp, /*dry_run=*/true).ok());
  ASSERT_EQ(resp.runs_size(), 2);
  EXPECT_EQ(resp.runs(0).id(), 0);
  EXPECT_FALSE(resp.runs(0).resolved_spec().empty());
  EXPECT_NE(resp.runs(1).resolved_spec().find("m_sparsity: 8"), std::string::npos)
      << resp.runs(1).resolved_spec();
  server_->Stop();
  EXPECT_EQ(CountRows(db_, "sweeps"), 0);
  EXPECT_EQ(CountRows(db_, "runs"), 0);
}

TEST_F(ServiceTest, RunThatCanNeverFitIsRefusedOnceWorkersExist) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  // No worker yet: accepted (workers may still come).
  ASSERT_TRUE(Submit(MSweep("early", {"4"}, /*gpus=*/8), &resp).ok());
  FakeWorker worker(&server_->gateway(), 2);
  v1::SweepSpec spec = MSweep("big", {"4"});
  spec.set_gpus_per_run(4);
  grpc::Status s = Submit(spec, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("gpus_per_run: 4"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("2 slots"), std::string::npos) << s.error_message();
  ASSERT_TRUE(Submit(MSweep("fits", {"4"}, /*gpus=*/2), &resp).ok());
}

// Probes of issue 36: three runs end with top1 0.3, NaN and 0.9, and `nmctl best -k 1` answered the 0.3 run
// (NaN broke the sort). The NaN is not stored as a number: its final point is refused naming the value, and
// best ranks the finite values.
TEST_F(ServiceTest, ANonFiniteFinalMetricIsNotStoredAndBestRanksTheFiniteOnes) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("nan", {"4", "8", "16"}), &resp).ok());
  FakeWorker worker(&server_->gateway(), 3);
  auto got = worker.WaitAssignments(3);
  ASSERT_EQ(got.size(), 3u);
  const double top1[] = {0.3, std::numeric_limits<double>::quiet_NaN(), 0.9};
  for (int i = 0; i < 3; ++i) {
    const v1::RunAttempt ra = Attempt(got[i].run_id(), 1);
    ASSERT_TRUE(Start(ra).ok());
    const grpc::Status point = testing::ReportPoint(server_->gateway(), ra, "final", 1, {{"top1", top1[i]}});
    if (i == 1) {
      EXPECT_EQ(point.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
      EXPECT_NE(point.error_message().find("point.values[\"top1\"]: NaN is not a finite number"),
                std::string::npos)
          << point.error_message();
    } else {
      ASSERT_TRUE(point.ok()) << point.error_message();
    }
    v1::CompleteRunRequest done;
    *done.mutable_run() = ra;
    done.set_outcome(v1::SUCCEEDED);
    v1::Ack ack;
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, ra.run_id());
    ASSERT_TRUE(server_->gateway().CompleteRun(&ctx, done, &ack).ok());
  }
  const v1::Run diverged = GetRun(got[1].run_id());
  EXPECT_EQ(diverged.state(), v1::SUCCEEDED);
  EXPECT_TRUE(diverged.final_metrics().empty());
  v1::GetBestRequest req;
  req.set_sweep_id(resp.sweep().id());
  req.set_metric("top1");
  req.set_k(3);
  v1::GetBestResponse best;
  grpc::ClientContext ctx;
  ASSERT_TRUE(server_->coordinator().GetBest(&ctx, req, &best).ok());
  ASSERT_EQ(best.runs_size(), 2);
  EXPECT_EQ(best.runs(0).id(), got[2].run_id());
  EXPECT_EQ(best.runs(1).id(), got[0].run_id());
}

TEST_F(ServiceTest, AnAttemptHasOneFinalPoint) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("final", {"4"}), &resp).ok());
  FakeWorker worker(&server_->gateway(), 1);
  ASSERT_EQ(worker.WaitAssignments(1).size(), 1u);
  const v1::RunAttempt ra = Attempt(resp.runs(0).id(), 1);
  ASSERT_TRUE(Start(ra).ok());
  auto send_final = [&](uint64_t step) {
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, ra.run_id());
    v1::Ack ack;
    auto writer = server_->gateway().ReportMetrics(&ctx, &ack);
    v1::MetricReport r;
    *r.mutable_run() = ra;
    r.mutable_point()->set_kind("final");
    r.mutable_point()->set_step(step);
    (*r.mutable_point()->mutable_values())["top1"] = 0.5;
    writer->Write(r);
    writer->WritesDone();
    return writer->Finish();
  };
  ASSERT_TRUE(send_final(10).ok());
  EXPECT_TRUE(send_final(10).ok());  // The same point again (its answer was lost): stored once.
  const grpc::Status second = send_final(11);
  EXPECT_EQ(second.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(second.error_message(),
            "point.kind: run " + std::to_string(ra.run_id()) +
                " attempt 1 has its final point already (epoch 0, step 10); an attempt "
                "has one");
}

// GetBest ranks by the metric's declared direction: the lowest loss is best without `minimize`, and a metric
// without a declared direction is refused unless the request says which way is better.
TEST_F(ServiceTest, BestRanksByTheMetricsDeclaredDirection) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("dir", {"4", "8"}), &resp).ok());
  FakeWorker worker(&server_->gateway(), 2);
  auto got = worker.WaitAssignments(2);
  ASSERT_EQ(got.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    v1::RunAttempt ra = Attempt(got[i].run_id(), 1);
    ASSERT_TRUE(Start(ra).ok());
    ASSERT_TRUE(testing::ReportPoint(server_->gateway(), ra, "final", 1,
                                     {{"loss", i == 0 ? 0.3 : 0.6}, {"acc", i == 0 ? 0.3 : 0.6}})
                    .ok());
    v1::CompleteRunRequest req;
    *req.mutable_run() = ra;
    req.set_outcome(v1::SUCCEEDED);
    v1::Ack ack;
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, req.run().run_id());
    ASSERT_TRUE(server_->gateway().CompleteRun(&ctx, req, &ack).ok());
  }
  auto best = [&](const std::string& metric, bool minimize, bool maximize, v1::GetBestResponse* out) {
    v1::GetBestRequest req;
    req.set_sweep_id(resp.sweep().id());
    req.set_metric(metric);
    req.set_minimize(minimize);
    req.set_maximize(maximize);
    grpc::ClientContext ctx;
    return server_->coordinator().GetBest(&ctx, req, out);
  };
  v1::GetBestResponse out;
  ASSERT_TRUE(best("loss", false, false, &out).ok());
  ASSERT_EQ(out.runs_size(), 1);
  EXPECT_EQ(out.runs(0).id(), got[0].run_id());  // Loss 0.3 < 0.6.
  out.Clear();
  grpc::Status refused = best("acc", false, false, &out);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("metric 'acc' has no declared direction"), std::string::npos)
      << refused.error_message();
  ASSERT_TRUE(best("acc", false, true, &out).ok());
  EXPECT_EQ(out.runs(0).id(), got[1].run_id());
  out.Clear();
  EXPECT_EQ(best("acc", true, true, &out).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServiceTest, FullLifecycleWatchBestAndExport) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("life", {"4", "8", "16"}), &resp).ok());
  FakeWorker worker(&server_->gateway(), 2);
  auto got = worker.WaitAssignments(2);
  ASSERT_EQ(got.size(), 2u);
  std::set<uint32_t> slots;
  for (const auto& a : got) {
    EXPECT_EQ(a.attempt(), 1u);
    EXPECT_FALSE(a.resume());
    ASSERT_EQ(a.slots_size(), 1);
    slots.insert(a.slots(0));
  }
  EXPECT_EQ(slots, (std::set<uint32_t>{0, 1}));
  EXPECT_EQ(ListRuns(resp.sweep().id())[2].queue_position(), 1);

  v1::RunAttempt first = Attempt(got[0].run_id(), 1);
  {
    // A report without the holder's session is refused even with the right attempt.
    v1::StartRunRequest req;
    *req.mutable_run() = first;
    v1::Ack ack;
    grpc::ClientContext ctx;
    ctx.AddMetadata("nmsparse-worker-session", "nms_forged");
    grpc::Status s = server_->gateway().StartRun(&ctx, req, &ack);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_NE(s.error_message().find("belongs to worker"), std::string::npos) << s.error_message();
  }
  ASSERT_TRUE(Start(first).ok());
  EXPECT_TRUE(Start(first).ok());  // Repeated StartRun of the same attempt is harmless.
  ASSERT_TRUE(Report(first, 0, 2.0).ok());
  ASSERT_TRUE(Report(first, 1, 1.0).ok());
  v1::LogReport log;
  *log.mutable_run() = first;
  log.add_lines()->set_text("epoch 1 done");
  v1::Ack ack;
  {
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, log.run().run_id());
    ASSERT_TRUE(server_->gateway().ReportLog(&ctx, log, &ack).ok());
  }
  {
    v1::ListWorkersResponse workers;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().ListWorkers(&ctx, v1::ListWorkersRequest(), &workers).ok());
    ASSERT_EQ(workers.workers_size(), 1);
    EXPECT_TRUE(workers.workers(0).alive());
    EXPECT_EQ(workers.workers(0).free_slots(), 0u);
    EXPECT_EQ(workers.workers(0).running_runs_size(), 2);
  }
  {
    v1::GetLogsRequest lreq;
    lreq.set_run_id(first.run_id());
    v1::GetLogsResponse logs;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().GetLogs(&ctx, lreq, &logs).ok());
    ASSERT_EQ(logs.lines_size(), 1);
    EXPECT_EQ(logs.lines(0).text(), "epoch 1 done");
    EXPECT_EQ(logs.lines(0).attempt(), 1u);
  }
  ASSERT_TRUE(Complete(first, v1::SUCCEEDED, 0.7).ok());
  ASSERT_TRUE(Start(Attempt(got[1].run_id(), 1)).ok());
  ASSERT_TRUE(Complete(Attempt(got[1].run_id(), 1), v1::SUCCEEDED, 0.9).ok());
  auto third = worker.WaitAssignments(3);
  ASSERT_EQ(third.size(), 3u);  // A completion frees a slot for the waiting run.

  // WatchRun replays everything of a finished run and ends.
  v1::WatchRunRequest wreq;
  wreq.set_run_id(first.run_id());
  grpc::ClientContext wctx;
  auto stream = server_->coordinator().WatchRun(&wctx, wreq);
  v1::RunEvent e;
  int metrics = 0, states = 0, logs = 0;
  int64_t last_seq = 0;
  while (stream->Read(&e)) {
    int64_t seq = e.has_metric() ? e.metric().seq() : e.has_state() ? e.state().seq() : e.log().seq();
    EXPECT_GT(seq, last_seq);
    last_seq = seq;
    metrics += e.has_metric();
    states += e.has_state();
    logs += e.has_log();
  }
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_EQ(metrics, 3);  // Two epoch points and the final point (the run's final metrics).
  EXPECT_EQ(states, 4);  // submitted, ASSIGNED, RUNNING, SUCCEEDED.
  EXPECT_EQ(logs, 1);

  v1::GetBestRequest breq;
  breq.set_sweep_id(resp.sweep().id());
  breq.set_metric("top1");
  breq.set_k(5);
  v1::GetBestResponse best;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().GetBest(&ctx, breq, &best).ok());
  }
  ASSERT_EQ(best.runs_size(), 2);
  EXPECT_EQ(best.runs(0).id(), got[1].run_id());
  EXPECT_DOUBLE_EQ(best.runs(0).final_metrics().at("top1"), 0.9);

  v1::ExportRequest xreq;
  xreq.set_sweep_id(resp.sweep().id());
  xreq.set_format(v1::ExportRequest::CSV);
  v1::ExportResponse csv;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().Export(&ctx, xreq, &csv).ok());
  }
  // The config columns (issue 40): the spec keys some run sets (the stand-in expander sets few).
  EXPECT_EQ(csv.content().substr(0, csv.content().find('\n')),
            "run_id,index,m,state,config.model.name,config.resources.gpus,config.sparsity.m_sparsity,top1,"
            "content_hash");
  EXPECT_NE(csv.content().find(",SUCCEEDED,vit_micro_patch4_28,1,4,0.7,"), std::string::npos)
      << csv.content();
  xreq.set_format(v1::ExportRequest::JSON);
  xreq.set_include_curves(true);
  v1::ExportResponse json;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().Export(&ctx, xreq, &json).ok());
  }
  EXPECT_NE(json.content().find("\"labels\":{\"m\":\"4\"}"), std::string::npos) << json.content();
  EXPECT_NE(json.content().find("\"values\":{\"loss\":2}"), std::string::npos) << json.content();
}

TEST_F(ServiceTest, SucceededContentIsReusedUnlessNoReuse) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("orig", {"4"}), &resp).ok());
  FakeWorker worker(&server_->gateway(), 1);
  auto got = worker.WaitAssignments(1);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(Start(Attempt(got[0].run_id(), 1)).ok());
  ASSERT_TRUE(Complete(Attempt(got[0].run_id(), 1), v1::SUCCEEDED, 0.8).ok());

  v1::SubmitSweepResponse again;
  ASSERT_TRUE(Submit(MSweep("again", {"4", "8"}), &again).ok());
  ASSERT_EQ(again.runs_size(), 2);
  EXPECT_EQ(again.runs(0).state(), v1::SUCCEEDED);
  EXPECT_EQ(again.runs(0).reused_from(), got[0].run_id());
  EXPECT_DOUBLE_EQ(GetRun(again.runs(0).id()).final_metrics().at("top1"), 0.8);
  EXPECT_EQ(again.runs(1).state(), v1::QUEUED);

  v1::SweepSpec fresh = MSweep("fresh", {"4"});
  fresh.set_no_reuse(true);
  v1::SubmitSweepResponse retrain;
  ASSERT_TRUE(Submit(fresh, &retrain).ok());
  EXPECT_EQ(retrain.runs(0).state(), v1::QUEUED);
  EXPECT_EQ(retrain.runs(0).reused_from(), 0);
}

// Issue 40: runs of one sweep with one content hash (a dense run in each N:M column) train once: the
// scheduler holds the twin while the first trains, and its success ends the twin SUCCEEDED with its results.
// A later sweep whose dense run was hashed before dense runs ignored N:M (legacy_content_hash) reuses it.
absl::StatusOr<std::vector<NewRun>> DenseTwinsExpand(const v1::SweepSpec& spec) {
  absl::StatusOr<std::vector<NewRun>> runs = GridExpand(spec);
  if (!runs.ok()) return runs;
  for (NewRun& r : *runs) {
    const std::string m = r.labels.at(0).second;
    if (spec.name() == "twins") r.content_hash = m == "16" ? "sparse-16" : "dense-old";  // Dense at 4 and 8.
    if (spec.name() == "later") {
      r.content_hash = "dense-new";
      r.legacy_content_hash = m == "4" ? "dense-old" : "";
    }
  }
  return runs;
}

TEST_F(ServiceTest, DenseTwinsTrainOnceAndOldHashesAreStillReused) {
  server_ = std::make_unique<TestServer>(db_, 10000, 5000, DenseTwinsExpand);
  v1::SubmitSweepResponse twins;
  ASSERT_TRUE(Submit(MSweep("twins", {"4", "8", "16"}), &twins).ok());
  FakeWorker worker(&server_->gateway(), 4);
  const std::vector<v1::Assignment> got = worker.WaitAssignments(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].run_id(), twins.runs(0).id());
  EXPECT_EQ(got[1].run_id(), twins.runs(2).id());  // Not the dense twin: it waits.
  EXPECT_EQ(GetRun(twins.runs(1).id()).state(), v1::QUEUED);
  ASSERT_TRUE(Start(Attempt(got[0].run_id(), 1)).ok());
  ASSERT_TRUE(Complete(Attempt(got[0].run_id(), 1), v1::SUCCEEDED, 0.8).ok());
  const v1::Run twin = GetRun(twins.runs(1).id());
  EXPECT_EQ(twin.state(), v1::SUCCEEDED);
  EXPECT_EQ(twin.reused_from(), got[0].run_id());
  EXPECT_DOUBLE_EQ(twin.final_metrics().at("top1"), 0.8);
  EXPECT_EQ(twin.attempt(), 0u);  // Never trained.

  v1::SubmitSweepResponse later;
  ASSERT_TRUE(Submit(MSweep("later", {"4", "8"}), &later).ok());
  EXPECT_EQ(later.runs(0).reused_from(), got[0].run_id());  // Found by its hash before the change.
  EXPECT_EQ(later.runs(1).state(), v1::QUEUED);             // The same new hash: trains once, here.
}

TEST_F(ServiceTest, PriorityThenSubmissionOrderAndGang) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse low, high;
  ASSERT_TRUE(Submit(MSweep("low", {"4", "8", "16"}), &low).ok());
  v1::SweepSpec big = MSweep("high", {"4"});
  big.set_priority(5);
  big.set_gpus_per_run(4);
  ASSERT_TRUE(Submit(big, &high).ok());
  std::vector<v1::Run> waiting = ListRuns(low.sweep().id());
  EXPECT_EQ(ListRuns(high.sweep().id())[0].queue_position(), 1);
  EXPECT_EQ(waiting[0].queue_position(), 2);
  EXPECT_EQ(waiting[2].queue_position(), 4);

  FakeWorker worker(&server_->gateway(), 4);
  auto got = worker.WaitAssignments(1);
  ASSERT_GE(got.size(), 1u);
  absl::SleepFor(absl::Milliseconds(300));  // Later passes must not place anything: all 4 slots are taken.
  got = worker.WaitAssignments(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].run_id(), high.runs(0).id());
  EXPECT_EQ(got[0].slots_size(), 4);  // One gang of 4 ranks on one node.
  EXPECT_EQ(ListRuns(low.sweep().id())[0].queue_position(), 1);

  ASSERT_TRUE(Start(Attempt(got[0].run_id(), 1)).ok());
  ASSERT_TRUE(Complete(Attempt(got[0].run_id(), 1), v1::SUCCEEDED).ok());
  got = worker.WaitAssignments(4);
  ASSERT_EQ(got.size(), 4u);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(got[i].run_id(), low.runs(i - 1).id());
}

TEST_F(ServiceTest, LostLeaseRequeuesWithNextAttemptThenFailsWhenRetriesRunOut) {
  server_ = std::make_unique<TestServer>(db_, /*lease_ms=*/300, /*grace_ms=*/200);
  v1::SweepSpec spec = MSweep("lease", {"4"});
  spec.set_max_retries(1);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(spec, &resp).ok());
  int64_t run = resp.runs(0).id();

  auto a = std::make_unique<FakeWorker>(&server_->gateway(), 1);
  auto got = a->WaitAssignments(1);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(Start(Attempt(run, 1)).ok());
  FakeWorker b(&server_->gateway(), 1);
  b.StartHeartbeats(50);
  a->CloseStream();  // Worker a goes silent.

  auto moved = b.WaitAssignments(1, 5000);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].run_id(), run);
  EXPECT_EQ(moved[0].attempt(), 2u);
  EXPECT_TRUE(moved[0].resume());
  v1::GetRunResponse full;
  GetRun(run, &full);
  bool requeued = false;
  for (const auto& c : full.history()) requeued |= c.from() == v1::RUNNING && c.to() == v1::QUEUED;
  EXPECT_TRUE(requeued);

  // Worker a comes back late: its attempt is fenced off, and it must register again.
  EXPECT_EQ(Report(Attempt(run, 1), 3, 0.1).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Complete(Attempt(run, 1), v1::SUCCEEDED).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  v1::HeartbeatResponse hb;
  EXPECT_EQ(Heartbeat(a->id(), {Attempt(run, 1)}, &hb).error_code(), grpc::StatusCode::NOT_FOUND);

  ASSERT_TRUE(Start(Attempt(run, 2)).ok());
  b.StopHeartbeats();
  b.CloseStream();
  v1::Run failed = WaitState(run, v1::FAILED);
  EXPECT_EQ(failed.state(), v1::FAILED);
  EXPECT_NE(failed.message().find("no retries left"), std::string::npos) << failed.message();
}

TEST_F(ServiceTest, CancelRunningRunStopsItThroughTheWorker) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("cancel", {"4", "8"}), &resp).ok());
  FakeWorker worker(&server_->gateway(), 1);
  auto got = worker.WaitAssignments(1);
  ASSERT_EQ(got.size(), 1u);
  v1::RunAttempt ra = Attempt(got[0].run_id(), 1);
  ASSERT_TRUE(Start(ra).ok());
  v1::CancelSweepResponse cresp;
  ASSERT_TRUE(CancelSweep(resp.sweep().id(), &cresp).ok());
  EXPECT_EQ(cresp.cancelled(), 2u);
  EXPECT_EQ(cresp.stopping(), 1u);
  v1::HeartbeatResponse hb;
  ASSERT_TRUE(Heartbeat(worker.id(), {ra}, &hb).ok());
  ASSERT_EQ(hb.stop_size(), 1);
  EXPECT_EQ(hb.stop(0).run_id(), ra.run_id());
  EXPECT_EQ(GetRun(ra.run_id()).state(), v1::RUNNING);
  ASSERT_TRUE(Complete(ra, v1::CANCELLED).ok());
  EXPECT_EQ(GetRun(ra.run_id()).state(), v1::CANCELLED);
  // A watch of the cancelled run replays its history and ends.
  v1::WatchRunRequest wreq;
  wreq.set_run_id(ra.run_id());
  grpc::ClientContext wctx;
  wctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  auto stream = server_->coordinator().WatchRun(&wctx, wreq);
  v1::RunEvent e, last;
  while (stream->Read(&e)) last = e;
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_EQ(last.state().to(), v1::CANCELLED);
  int64_t other = resp.runs(0).id() == ra.run_id() ? resp.runs(1).id() : resp.runs(0).id();
  EXPECT_EQ(GetRun(other).state(), v1::CANCELLED);
}

// issue 14: `cancel --sweep` counted a running run that then SUCCEEDED. A run asked to stop whose training
// finishes before its worker stops it ends CANCELLED, as counted, with its final metrics kept; cancelling it
// again is not an error and says it had ended.
TEST_F(ServiceTest, CancelCountAgreesWithTheOutcomeAndRecancelIsNoError) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("race", {"4"}), &resp).ok());
  FakeWorker worker(&server_->gateway(), 1);
  auto got = worker.WaitAssignments(1);
  ASSERT_EQ(got.size(), 1u);
  v1::RunAttempt ra = Attempt(got[0].run_id(), 1);
  ASSERT_TRUE(Start(ra).ok());
  v1::CancelSweepResponse cresp;
  ASSERT_TRUE(CancelSweep(resp.sweep().id(), &cresp).ok());
  EXPECT_EQ(cresp.cancelled(), 1u);
  EXPECT_EQ(cresp.stopping(), 1u);
  // The trainer finished before the worker saw the stop.
  ASSERT_TRUE(Complete(ra, v1::SUCCEEDED, 0.75).ok());
  const v1::Run run = GetRun(ra.run_id());
  EXPECT_EQ(run.state(), v1::CANCELLED);
  EXPECT_NE(run.message().find("finished before its worker stopped it"), std::string::npos) << run.message();
  EXPECT_DOUBLE_EQ(run.final_metrics().at("top1"), 0.75);

  v1::CancelRunRequest again;
  again.set_run_id(ra.run_id());
  v1::CancelRunResponse again_resp;
  grpc::ClientContext ctx;
  const grpc::Status s = server_->coordinator().CancelRun(&ctx, again, &again_resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(again_resp.already_ended());
  EXPECT_EQ(again_resp.run().state(), v1::CANCELLED);
}

TEST_F(ServiceTest, RestartKeepsStateAndReattachesRunningAttempts) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("restart", {"4", "8"}), &resp).ok());
  int64_t worker_id = 0;
  v1::RunAttempt ra;
  {
    FakeWorker worker(&server_->gateway(), 1);
    worker_id = worker.id();
    auto got = worker.WaitAssignments(1);
    ASSERT_EQ(got.size(), 1u);
    ra = Attempt(got[0].run_id(), 1);
    ASSERT_TRUE(Start(ra).ok());
    ASSERT_TRUE(Report(ra, 0, 1.5).ok());
  }
  server_->Restart();  // A new server object over the same database file.

  v1::GetRunResponse full;
  v1::Run r = GetRun(ra.run_id(), &full);
  EXPECT_EQ(r.state(), v1::RUNNING);
  EXPECT_EQ(r.attempt(), 1u);
  EXPECT_EQ(r.worker_id(), worker_id);
  EXPECT_EQ(full.metrics_size(), 1);
  std::vector<v1::Run> runs = ListRuns(resp.sweep().id());
  ASSERT_EQ(runs.size(), 2u);

  // The worker returns with its running attempt and a stale one: the first is kept, the second stopped.
  FakeWorker back(&server_->gateway(), 1, worker_id, {ra, Attempt(runs[1].id(), 7)});
  EXPECT_EQ(back.id(), worker_id);
  ASSERT_EQ(back.registration().stop_size(), 1);
  EXPECT_EQ(back.registration().stop(0).run_id(), runs[1].id());
  ASSERT_TRUE(Complete(ra, v1::SUCCEEDED).ok());
  auto got = back.WaitAssignments(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].run_id(), runs[1].id());
}

// A worker sends a report again until it is acknowledged: after a lost answer, or a stream that failed
// part-way (the database's disk full after the first points). Each trainer line is stored once.
TEST_F(ServiceTest, AReportSentAgainIsStoredOnce) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(MSweep("again", {"4"}), &resp).ok());
  FakeWorker worker(&server_->gateway(), 1);
  ASSERT_EQ(worker.WaitAssignments(1).size(), 1u);
  const v1::RunAttempt ra = Attempt(resp.runs(0).id(), 1);
  ASSERT_TRUE(Start(ra).ok());
  ASSERT_TRUE(Report(ra, 0, 2.5).ok());
  ASSERT_TRUE(Report(ra, 0, 2.5).ok());  // Sent again: acknowledged, not stored twice.
  ASSERT_TRUE(Report(ra, 1, 2.0).ok());
  v1::GetRunResponse full;
  GetRun(ra.run_id(), &full);
  ASSERT_EQ(full.metrics_size(), 2);
  EXPECT_EQ(full.metrics(0).epoch(), 0u);
  EXPECT_EQ(full.metrics(1).epoch(), 1u);
}

// nmtrain's bad-spec exit (2) ends the run FAILED at once, with the message, whatever retries remain; a crash
// (a signal) uses a retry.
TEST_F(ServiceTest, ABadSpecExitIsNotRetried) {
  server_ = std::make_unique<TestServer>(db_);
  v1::SweepSpec spec = MSweep("bad-spec", {"4", "8"});
  spec.set_max_retries(3);
  v1::SubmitSweepResponse resp;
  ASSERT_TRUE(Submit(spec, &resp).ok());
  FakeWorker worker(&server_->gateway(), 2);
  ASSERT_EQ(worker.WaitAssignments(2).size(), 2u);
  const auto fail = [&](int64_t run, int exit_code, const std::string& message) {
    v1::CompleteRunRequest req;
    *req.mutable_run() = Attempt(run, 1);
    req.set_outcome(v1::FAILED);
    req.set_exit_code(exit_code);
    req.set_message(message);
    v1::Ack ack;
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, req.run().run_id());
    return server_->gateway().CompleteRun(&ctx, req, &ack);
  };
  const int64_t bad = resp.runs(0).id(), crashed = resp.runs(1).id();
  ASSERT_TRUE(Start(Attempt(bad, 1)).ok());
  ASSERT_TRUE(Start(Attempt(crashed, 1)).ok());
  ASSERT_TRUE(fail(bad, 2, "rank 0 exited with code 2 (bad spec): model.name: unknown model").ok());
  ASSERT_TRUE(fail(crashed, 137, "rank 0 exited with code 137 (killed (SIGKILL))").ok());
  const v1::Run failed = GetRun(bad);
  EXPECT_EQ(failed.state(), v1::FAILED);
  EXPECT_EQ(failed.attempt(), 1u);
  EXPECT_NE(failed.message().find("not retried"), std::string::npos) << failed.message();
  EXPECT_NE(failed.message().find("model.name: unknown model"), std::string::npos) << failed.message();
  EXPECT_NE(GetRun(crashed).state(), v1::FAILED);  // Requeued (and reassigned at once, perhaps).
}

}  // namespace
}  // namespace nmsparse::server

namespace nmsparse::server {
namespace {

TEST(NmServerTest, SecondServerOnTheSameAddressIsRefused) {
  testing::TestServer first(testing::TempDbPath("first"));
  ServerOptions o;
  o.listen = first.server().address();
  o.db_path = testing::TempDbPath("second");
  o.expand = testing::GridExpand;
  auto second = NmServer::Start(o);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
}

}  // namespace
}  // namespace nmsparse::server
