// ListRunCurves over a real channel gives, page after page, exactly what one GetRun per run gives (runs in
// ListRuns order, every attempt's points in seq order), and refuses page bounds past its limits.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "schemas/limits.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::Attempt;
using testing::FakeWorker;
using testing::GatewayComplete;
using testing::GatewayStart;
using testing::MSweep;
using testing::ReportEpoch;
using testing::TempDbPath;
using testing::TestServer;

class RunCurvesServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { server_ = std::make_unique<TestServer>(TempDbPath("run_curves_service")); }

  grpc::Status Start(const v1::RunAttempt& ra) { return GatewayStart(server_->gateway(), ra); }

  grpc::Status Complete(const v1::RunAttempt& ra, v1::RunState outcome, int exit_code = 0) {
    return GatewayComplete(server_->gateway(), ra, outcome, exit_code);
  }

  grpc::Status Page(const v1::ListRunCurvesRequest& req, v1::ListRunCurvesResponse* resp) {
    grpc::ClientContext ctx;
    return server_->coordinator().ListRunCurves(&ctx, req, resp);
  }

  // Each run as GetRun shows it, its points included, as text.
  std::vector<std::string> PerRun(int64_t sweep) {
    v1::ListRunsRequest list;
    list.set_sweep_id(sweep);
    v1::ListRunsResponse runs;
    grpc::ClientContext ctx;
    EXPECT_TRUE(server_->coordinator().ListRuns(&ctx, list, &runs).ok());
    std::vector<std::string> out;
    for (const v1::Run& run : runs.runs()) {
      v1::GetRunRequest req;
      req.set_run_id(run.id());
      req.set_include_metrics(true);
      v1::GetRunResponse full;
      grpc::ClientContext get;
      EXPECT_TRUE(server_->coordinator().GetRun(&get, req, &full).ok());
      v1::RunCurve curve;
      *curve.mutable_run() = full.run();
      *curve.mutable_metrics() = full.metrics();
      out.push_back(curve.ShortDebugString());
    }
    return out;
  }

  // Every page in turn, a run cut between two pages joined again.
  std::vector<std::string> Paged(int64_t sweep, uint32_t max_runs, uint32_t max_points) {
    std::vector<v1::RunCurve> curves;
    v1::ListRunCurvesRequest req;
    req.set_sweep_id(sweep);
    req.set_max_runs(max_runs);
    req.set_max_points(max_points);
    for (int pages = 0; pages < 1000; ++pages) {
      v1::ListRunCurvesResponse resp;
      grpc::Status s = Page(req, &resp);
      EXPECT_TRUE(s.ok()) << s.error_message();
      if (!s.ok()) break;
      for (const v1::RunCurve& c : resp.runs()) {
        if (!curves.empty() && curves.back().run().id() == c.run().id()) {
          curves.back().mutable_metrics()->MergeFrom(c.metrics());
        } else {
          curves.push_back(c);
        }
      }
      if (!resp.more()) break;
      req.set_from_run(resp.next_from_run());
      req.set_after_seq(resp.next_after_seq());
    }
    std::vector<std::string> out;
    for (const v1::RunCurve& c : curves) out.push_back(c.ShortDebugString());
    return out;
  }

  std::unique_ptr<TestServer> server_;
};

TEST_F(RunCurvesServiceTest, PagesEqualOneGetRunPerRunWithEveryAttempt) {
  v1::SweepSpec spec = MSweep("curves", {"4", "8", "16", "32"});
  spec.set_max_retries(1);
  v1::SubmitSweepResponse submitted;
  {
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = spec;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().SubmitSweep(&ctx, req, &submitted).ok());
  }
  v1::SubmitSweepResponse other;  // A second sweep, queued: its runs are not the first one's.
  {
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = MSweep("other", {"4", "8"});
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().SubmitSweep(&ctx, req, &other).ok());
  }
  const int64_t a = submitted.runs(0).id(), b = submitted.runs(1).id(), c = submitted.runs(2).id();
  FakeWorker worker(&server_->gateway(), 4);
  ASSERT_EQ(worker.WaitAssignments(4).size(), 4u);
  for (int64_t run : {a, b, c}) ASSERT_TRUE(Start(Attempt(run, 1)).ok());
  for (int epoch = 0; epoch < 3; ++epoch) {  // Interleaved: the runs' seqs interleave too.
    for (int64_t run : {a, b, c}) {
      ASSERT_TRUE(
          ReportEpoch(server_->gateway(), Attempt(run, 1), epoch, {{"loss", 1.0 / (epoch + run)}}).ok());
    }
  }
  ASSERT_TRUE(Complete(Attempt(a, 1), v1::FAILED, 137).ok());  // A crash: retried as attempt 2.
  ASSERT_TRUE(Complete(Attempt(b, 1), v1::SUCCEEDED).ok());
  ASSERT_EQ(worker.WaitAssignments(6).size(), 6u);  // Attempt 2 of a, and a run of the other sweep.
  ASSERT_TRUE(Start(Attempt(a, 2)).ok());
  for (int epoch = 0; epoch < 2; ++epoch) {
    ASSERT_TRUE(ReportEpoch(server_->gateway(), Attempt(a, 2), epoch, {{"loss", 0.1 * epoch}}).ok());
  }

  const std::vector<std::string> expected = PerRun(submitted.sweep().id());
  ASSERT_EQ(expected.size(), 4u);
  for (uint32_t max_runs : {0u, 1u, 3u}) {
    for (uint32_t max_points : {0u, 1u, 2u, 4u}) {
      EXPECT_EQ(Paged(submitted.sweep().id(), max_runs, max_points), expected)
          << max_runs << " runs and " << max_points << " points a page";
    }
  }
  EXPECT_EQ(Paged(other.sweep().id(), 0, 0), PerRun(other.sweep().id()));
}

TEST_F(RunCurvesServiceTest, RefusesPageBoundsPastTheLimitsAndUnknownSweeps) {
  v1::SubmitSweepResponse submitted;
  {
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = MSweep("bounds", {"4"});
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().SubmitSweep(&ctx, req, &submitted).ok());
  }
  v1::ListRunCurvesRequest req;
  req.set_sweep_id(submitted.sweep().id());
  v1::ListRunCurvesResponse resp;
  req.set_max_runs(limits::kMaxCurvePageRuns + 1);
  grpc::Status s = Page(req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "max_runs: 1001 is more than the limit of 1,000 a page");
  req.set_max_runs(limits::kMaxCurvePageRuns);
  req.set_max_points(limits::kMaxCurvePagePoints + 1);
  s = Page(req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "max_points: 100001 is more than the limit of 100,000 a page");
  req.set_max_points(limits::kMaxCurvePagePoints);
  EXPECT_TRUE(Page(req, &resp).ok());
  EXPECT_EQ(resp.runs_size(), 1);
  req.set_sweep_id(submitted.sweep().id() + 1);
  EXPECT_EQ(Page(req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace nmsparse::server
