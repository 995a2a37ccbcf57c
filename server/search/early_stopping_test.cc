// Early stopping through the real services and database: decisions in report order, the stop delivered by
// heartbeat, STOPPED_EARLY with the reason, no retry, and no second decision after a coordinator restart.
#include <grpcpp/grpcpp.h>

#include <limits>

#include "gtest/gtest.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::CountRows;
using testing::FakeWorker;
using testing::MSweep;
using testing::TempDbPath;
using testing::TestServer;

class EarlyStoppingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = TempDbPath("early_stopping");
    server_ = std::make_unique<TestServer>(db_);
  }

  // Three runs, reduction factor 2, rungs at epochs 1 and 2 (max_resource 4), two retries each; min_peers 0
  // is its default, the reduction factor.
  v1::SubmitSweepResponse SubmitAsha(uint32_t min_peers = 0) {
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = MSweep("asha", {"4", "8", "16"});
    req.mutable_spec()->set_max_retries(2);
    v1::EarlyStopping* es = req.mutable_spec()->mutable_early_stopping();
    es->set_policy("asha");
    es->set_metric("top1");
    es->set_mode("max");
    es->set_resource("epoch");
    es->set_min_resource(1);
    es->set_reduction_factor(2);
    es->set_max_resource(4);
    es->set_min_peers(min_peers);
    v1::SubmitSweepResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = server_->coordinator().SubmitSweep(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  v1::RunAttempt Started(int64_t run_id) {
    v1::RunAttempt ra;
    ra.set_run_id(run_id);
    ra.set_attempt(1);
    v1::StartRunRequest req;
    *req.mutable_run() = ra;
    v1::Ack ack;
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, req.run().run_id());
    EXPECT_TRUE(server_->gateway().StartRun(&ctx, req, &ack).ok());
    return ra;
  }

  // One epoch point with top1 (epoch counted from 0, as nmtrain does).
  void ReportTop1(const v1::RunAttempt& ra, int epoch, double top1) {
    grpc::Status s = testing::ReportEpoch(server_->gateway(), ra, epoch, {{"top1", top1}});
    EXPECT_TRUE(s.ok()) << s.error_message();
  }

  void End(const v1::RunAttempt& ra, v1::RunState outcome) {
    v1::CompleteRunRequest req;
    *req.mutable_run() = ra;
    req.set_outcome(outcome);
    v1::Ack ack;
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, req.run().run_id());
    EXPECT_TRUE(server_->gateway().CompleteRun(&ctx, req, &ack).ok());
  }

  v1::Run Get(int64_t id) {
    v1::GetRunRequest req;
    req.set_run_id(id);
    v1::GetRunResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(server_->coordinator().GetRun(&ctx, req, &resp).ok());
    return resp.run();
  }

  std::vector<int64_t> StopsFor(int64_t worker, const std::vector<v1::RunAttempt>& running) {
    v1::HeartbeatRequest req;
    req.set_worker_id(worker);
    for (const auto& ra : running) *req.add_running() = ra;
    v1::HeartbeatResponse resp;
    grpc::ClientContext ctx;
    testing::AsWorker(&ctx, req.worker_id());
    EXPECT_TRUE(server_->gateway().Heartbeat(&ctx, req, &resp).ok());
    std::vector<int64_t> out;
    for (const auto& ra : resp.stop()) out.push_back(ra.run_id());
    return out;
  }

  std::string db_;
  std::unique_ptr<TestServer> server_;
};

TEST_F(EarlyStoppingTest, StopsTheLosersAtEachRungOnceAndForAll) {
  const v1::SubmitSweepResponse sweep = SubmitAsha();
  ASSERT_EQ(sweep.runs_size(), 3);
  FakeWorker worker(&server_->gateway(), 3);
  ASSERT_EQ(worker.WaitAssignments(3).size(), 3u);
  const v1::RunAttempt a = Started(sweep.runs(0).id());
  const v1::RunAttempt b = Started(sweep.runs(1).id());
  const v1::RunAttempt c = Started(sweep.runs(2).id());

  // Rung 0 (epoch 1), in this order: a 0.5 (first: waits for min_peers = 2 results), b 0.4 (n=2, keep 1,
  // cutoff 0.5: b stopped, a promoted), c 0.6 (n=3, keep 1, cutoff 0.6: goes on).
  ReportTop1(a, 0, 0.5);
  ReportTop1(b, 0, 0.4);
  ReportTop1(c, 0, 0.6);
  EXPECT_EQ(StopsFor(worker.id(), {a, b, c}), (std::vector<int64_t>{b.run_id()}));
  End(b, v1::CANCELLED);  // What nmworker reports once it stopped the trainer.
  v1::Run stopped = Get(b.run_id());
  EXPECT_EQ(stopped.state(), v1::STOPPED_EARLY);
  EXPECT_EQ(stopped.message(), "asha: rung 1 (epoch 1): top1 0.4 < cutoff 0.5 (best 1 of 2 go on): stopped");

  // Rung 1 (epoch 2): c 0.9 waits; a 0.7 (n=2, keep 1, cutoff 0.9) is stopped and c goes on. Its attempt then
  // fails: with retries left it is still not requeued.
  ReportTop1(c, 1, 0.9);
  ReportTop1(a, 1, 0.7);
  EXPECT_EQ(StopsFor(worker.id(), {a, c}), (std::vector<int64_t>{a.run_id()}));
  End(a, v1::FAILED);
  EXPECT_EQ(Get(a.run_id()).state(), v1::STOPPED_EARLY);
  EXPECT_EQ(Get(a.run_id()).attempt(), 1u);
  EXPECT_EQ(CountRows(db_, "rung_results"), 5);

  // After a restart, c reporting rung 1 again (say, from a resumed attempt) with a worse value is not decided
  // again: it keeps its promotion.
  server_->Restart();
  ReportTop1(c, 1, 0.1);
  EXPECT_EQ(CountRows(db_, "rung_results"), 5);
  EXPECT_EQ(Get(c.run_id()).state(), v1::RUNNING);
}

// Probe of issue 36: a NaN at a rung (from a custom trainer or worker) failed with INTERNAL "NOT NULL
// constraint failed: rung_results.value" on every retry, and the worker's later reports queued behind it.
// Now it is refused at the gateway naming the value, nothing is decided from it, and later reports go on.
TEST_F(EarlyStoppingTest, ANonFiniteValueAtARungIsRefusedAndLaterReportsGoOn) {
  const v1::SubmitSweepResponse sweep = SubmitAsha(/*min_peers=*/1);
  FakeWorker worker(&server_->gateway(), 3);
  ASSERT_EQ(worker.WaitAssignments(3).size(), 3u);
  const v1::RunAttempt a = Started(sweep.runs(0).id());
  const v1::RunAttempt b = Started(sweep.runs(1).id());
  const grpc::Status nan =
      testing::ReportEpoch(server_->gateway(), a, 0, {{"top1", std::numeric_limits<double>::quiet_NaN()}});
  EXPECT_EQ(nan.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(nan.error_message().rfind("point.values[\"top1\"]: NaN is not a finite number", 0), 0u)
      << nan.error_message();
  EXPECT_EQ(CountRows(db_, "rung_results"), 0);
  ReportTop1(b, 0, 0.4);  // The first finite value at the rung goes on.
  ReportTop1(a, 0, 0.5);
  EXPECT_EQ(CountRows(db_, "rung_results"), 2);
  EXPECT_EQ(StopsFor(worker.id(), {a, b}), (std::vector<int64_t>{}));
}

// The first runs at a rung wait for min_peers results (issue 40): with 3, a and b go on while they wait, and
// c's result decides all three among the same values, whatever order they came in. a was first and would
// have gone on under the old rule; now it is judged against its peers and stopped.
TEST_F(EarlyStoppingTest, TheFirstRunsAtARungWaitForTheirPeers) {
  const v1::SubmitSweepResponse sweep = SubmitAsha(/*min_peers=*/3);
  FakeWorker worker(&server_->gateway(), 3);
  ASSERT_EQ(worker.WaitAssignments(3).size(), 3u);
  const v1::RunAttempt a = Started(sweep.runs(0).id());
  const v1::RunAttempt b = Started(sweep.runs(1).id());
  const v1::RunAttempt c = Started(sweep.runs(2).id());
  ReportTop1(a, 0, 0.5);
  ReportTop1(b, 0, 0.6);
  EXPECT_EQ(StopsFor(worker.id(), {a, b, c}), (std::vector<int64_t>{}));
  EXPECT_EQ(Get(a.run_id()).message(), "");
  ReportTop1(c, 0, 0.4);  // n = 3, keep max(1, 3 / 2) = 1, cutoff 0.6.
  EXPECT_EQ(StopsFor(worker.id(), {a, b, c}), (std::vector<int64_t>{a.run_id(), c.run_id()}));
  End(a, v1::CANCELLED);
  EXPECT_EQ(Get(a.run_id()).state(), v1::STOPPED_EARLY);
  EXPECT_EQ(Get(a.run_id()).message(),
            "asha: rung 1 (epoch 1): top1 0.5 < cutoff 0.6 (best 1 of 3 go on): stopped");
  EXPECT_EQ(Get(b.run_id()).state(), v1::RUNNING);
  EXPECT_EQ(CountRows(db_, "rung_results"), 3);
}

}  // namespace
}  // namespace nmsparse::server
