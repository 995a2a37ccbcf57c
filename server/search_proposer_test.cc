// Search sweeps through the real services and database: the first `parallel` proposals at submission, one
// more each time a run ends, `budget` in all, and the same proposals for the same file and results.
#include <grpcpp/grpcpp.h>

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::FakeWorker;
using testing::MSweep;
using testing::TempDbPath;
using testing::TestServer;

v1::SweepSpec SearchSweep() {
  v1::SweepSpec spec = MSweep("tpe", {});
  spec.clear_grid();
  v1::RandomAxis* lr = spec.add_random();
  lr->set_key("optimizer.lr");
  lr->set_min(1e-4);
  lr->set_max(1e-1);
  lr->set_log(true);
  v1::Search* s = spec.mutable_search();
  s->set_algorithm("tpe");
  s->set_budget(5);
  s->set_seed(7);
  s->set_metric("top1");
  s->set_mode("max");
  s->set_parallel(2);
  s->set_n_startup(2);
  s->set_gamma(0.25);
  s->set_n_candidates(24);
  return spec;
}

// Submits the search sweep, then ends its runs one at a time in run order with top1 = 1 - |log10(lr) + 2|,
// as a worker with 2 slots would see them. Returns the proposed lr labels in run order.
std::vector<std::string> RunSearch(const std::string& name) {
  const std::string db = TempDbPath(name);
  TestServer server(db);
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = SearchSweep();
  v1::SubmitSweepResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = server.coordinator().SubmitSweep(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.runs_size(), 2) << "parallel 2: two proposals at submission";
  FakeWorker worker(&server.gateway(), 2);
  std::vector<std::string> lrs;
  for (size_t done = 0; done < 5; ++done) {
    std::vector<v1::Assignment> got = worker.WaitAssignments(done + 1);
    EXPECT_GE(got.size(), done + 1);
    if (got.size() < done + 1) break;
    const v1::Assignment& a = got[done];
    v1::RunAttempt ra;
    ra.set_run_id(a.run_id());
    ra.set_attempt(a.attempt());
    v1::GetRunRequest get;
    get.set_run_id(a.run_id());
    v1::GetRunResponse run;
    grpc::ClientContext gctx;
    EXPECT_TRUE(server.coordinator().GetRun(&gctx, get, &run).ok());
    const std::string lr = run.run().labels().at("optimizer.lr");
    lrs.push_back(lr);
    v1::StartRunRequest start;
    *start.mutable_run() = ra;
    v1::Ack ack;
    grpc::ClientContext sctx;
    EXPECT_TRUE(server.gateway().StartRun(&sctx, start, &ack).ok());
    v1::CompleteRunRequest done_req;
    *done_req.mutable_run() = ra;
    done_req.set_outcome(v1::SUCCEEDED);
    (*done_req.mutable_final_metrics())["top1"] = 1 - std::abs(std::log10(std::stod(lr)) + 2);
    grpc::ClientContext cctx;
    EXPECT_TRUE(server.gateway().CompleteRun(&cctx, done_req, &ack).ok());
  }
  v1::ListRunsRequest list;
  list.set_sweep_id(resp.sweep().id());
  v1::ListRunsResponse runs;
  grpc::ClientContext lctx;
  EXPECT_TRUE(server.coordinator().ListRuns(&lctx, list, &runs).ok());
  EXPECT_EQ(runs.runs_size(), 5) << "the budget, and no more";
  for (const v1::Run& r : runs.runs()) EXPECT_EQ(r.state(), v1::SUCCEEDED);
  return lrs;
}

TEST(SearchProposerTest, ProposesAsRunsEndUpToTheBudgetReproducibly) {
  const std::vector<std::string> first = RunSearch("search_a");
  ASSERT_EQ(first.size(), 5u);
  EXPECT_EQ(RunSearch("search_b"), first) << "same file, same results: same proposals";
  std::map<std::string, int> distinct;
  for (const std::string& lr : first) distinct[lr]++;
  EXPECT_EQ(distinct.size(), 5u);
}

}  // namespace
}  // namespace nmsparse::server
