// Search sweeps through the real services and database: the first `parallel` proposals at submission, one
// more each time a run ends, `budget` in all, and the same proposals for the same file and results. Proposals
// run on the proposer's thread: a gate there (ServerOptions.before_proposal_draw) holds one in progress while
// the coordinator is asked for answers. A point that is not a valid run is drawn again; when none is, the
// sweep's search ends with its reason, and the coordinator still starts and serves.
#include "server/sweeps/search_proposer.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "server/store/clock.h"
#include "server/store/sweep_table.h"
#include "server/sweeps/schemas_expander.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::FakeWorker;
using testing::GridExpand;
using testing::MSweep;
using testing::TempDbPath;
using testing::TestServer;

// Generous bounds for a loaded 2-core machine: what is held at a gate is waited for without a deadline race.
constexpr absl::Duration kPatience = absl::Seconds(60);
// An answer the coordinator owes while a proposal is held: far below "never", far above a loaded machine's
// slowest read.
constexpr int kAnswerDeadlineS = 10;

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

std::vector<v1::Run> ListRuns(TestServer& server, int64_t sweep_id) {
  v1::ListRunsRequest list;
  list.set_sweep_id(sweep_id);
  v1::ListRunsResponse runs;
  grpc::ClientContext ctx;
  EXPECT_TRUE(server.coordinator().ListRuns(&ctx, list, &runs).ok());
  return {runs.runs().begin(), runs.runs().end()};
}

// Polls `done` every 20 ms for up to kPatience.
template <typename Condition>
bool Eventually(Condition done) {
  const absl::Time deadline = absl::Now() + kPatience;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
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
    testing::AsHolderOf(&sctx, start.run().run_id());
    EXPECT_TRUE(server.gateway().StartRun(&sctx, start, &ack).ok());
    EXPECT_TRUE(testing::ReportPoint(server.gateway(), ra, "final", 1,
                                     {{"top1", 1 - std::abs(std::log10(std::stod(lr)) + 2)}})
                    .ok());
    v1::CompleteRunRequest done_req;
    *done_req.mutable_run() = ra;
    done_req.set_outcome(v1::SUCCEEDED);
    grpc::ClientContext cctx;
    testing::AsHolderOf(&cctx, done_req.run().run_id());
    EXPECT_TRUE(server.gateway().CompleteRun(&cctx, done_req, &ack).ok());
    // The proposal this end is owed is made on the proposer's thread: wait for it before the next run ends,
    // so that it sees exactly the results so far (as a worker whose runs take longer than a proposal would).
    const size_t owed = std::min<size_t>(5, done + 1 + 2);
    EXPECT_TRUE(Eventually([&] { return ListRuns(server, resp.sweep().id()).size() == owed; }));
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

// Holds the first point drawn (on the proposer's thread) until released; the others pass.
struct Gate {
  std::atomic<bool> armed{true};
  std::atomic<bool> gave_up{false};
  absl::Notification entered, release;
  std::function<void(int64_t)> Hook() {
    return [this](int64_t) {
      if (!armed.exchange(false)) return;
      entered.Notify();
      // Released by the test, unless the test itself waits for this proposal (a broken build): then the
      // gate gives up rather than hang, and says so.
      if (!release.WaitForNotificationWithTimeout(kPatience)) gave_up = true;
    };
  }
};

void SetDeadline(grpc::ClientContext* ctx, int seconds) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
}

// ListSweeps and GetSweep answer within kAnswerDeadlineS.
void ExpectPromptAnswers(TestServer& server, int64_t sweep_id) {
  v1::ListSweepsResponse listed;
  grpc::ClientContext lctx;
  SetDeadline(&lctx, kAnswerDeadlineS);
  grpc::Status s = server.coordinator().ListSweeps(&lctx, v1::ListSweepsRequest(), &listed);
  EXPECT_TRUE(s.ok()) << "ListSweeps: " << s.error_message();
  v1::GetSweepRequest get;
  get.set_sweep_id(sweep_id);
  v1::Sweep sweep;
  grpc::ClientContext gctx;
  SetDeadline(&gctx, kAnswerDeadlineS);
  s = server.coordinator().GetSweep(&gctx, get, &sweep);
  EXPECT_TRUE(s.ok()) << "GetSweep: " << s.error_message();
}

v1::Sweep GetSweep(TestServer& server, int64_t id) {
  v1::GetSweepRequest get;
  get.set_sweep_id(id);
  v1::Sweep sweep;
  grpc::ClientContext ctx;
  EXPECT_TRUE(server.coordinator().GetSweep(&ctx, get, &sweep).ok());
  return sweep;
}

// Stores a search sweep as an older coordinator could have (no submission checks, no run yet).
int64_t StoreSearchSweep(const std::string& db, const v1::SweepSpec& spec) {
  int64_t id = 0;
  auto store = Store::Open(db);
  EXPECT_TRUE(store.ok()) << store.status();
  absl::Status s = (*store)->Write([&](Database* d) -> absl::Status {
    absl::StatusOr<int64_t> inserted = InsertSweep(d, spec, NowMs(), {});
    if (inserted.ok()) id = *inserted;
    return inserted.status();
  });
  EXPECT_TRUE(s.ok()) << s;
  return id;
}

// Starts and completes (top1 = 0.5) the `n`-th assignment the worker got.
void CompleteAssignment(TestServer& server, FakeWorker& worker, size_t n) {
  std::vector<v1::Assignment> got = worker.WaitAssignments(n, absl::ToInt64Milliseconds(kPatience));
  ASSERT_GE(got.size(), n);
  v1::RunAttempt ra;
  ra.set_run_id(got[n - 1].run_id());
  ra.set_attempt(got[n - 1].attempt());
  v1::StartRunRequest start;
  *start.mutable_run() = ra;
  v1::Ack ack;
  grpc::ClientContext sctx;
  testing::AsHolderOf(&sctx, start.run().run_id());
  ASSERT_TRUE(server.gateway().StartRun(&sctx, start, &ack).ok());
  ASSERT_TRUE(testing::ReportPoint(server.gateway(), ra, "final", 1, {{"top1", 0.5}}).ok());
  v1::CompleteRunRequest done;
  *done.mutable_run() = ra;
  done.set_outcome(v1::SUCCEEDED);
  grpc::ClientContext cctx;
  SetDeadline(&cctx, kAnswerDeadlineS);
  testing::AsHolderOf(&cctx, done.run().run_id());
  const grpc::Status s = server.gateway().CompleteRun(&cctx, done, &ack);
  EXPECT_TRUE(s.ok()) << "CompleteRun answers without waiting for the next proposal: " << s.error_message();
}

// Issue 22: a proposal ran inside CompleteRun, holding the store, so a costly one froze the coordinator.
TEST(SearchProposerTest, CoordinatorAnswersWhileAProposalIsInProgress) {
  const std::string db = TempDbPath("search_gate");
  Gate gate;
  TestServer server(db);
  server.options().before_proposal_draw = gate.Hook();
  server.Restart();
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = SearchSweep();
  req.mutable_spec()->mutable_search()->set_parallel(1);
  v1::SubmitSweepResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(server.coordinator().SubmitSweep(&ctx, req, &resp).ok());
  FakeWorker worker(&server.gateway(), 1);
  CompleteAssignment(server, worker, 1);
  ASSERT_TRUE(gate.entered.WaitForNotificationWithTimeout(kPatience)) << "the next proposal started";
  ExpectPromptAnswers(server, resp.sweep().id());
  EXPECT_EQ(ListRuns(server, resp.sweep().id()).size(), 1u) << "held: not proposed yet";
  gate.release.Notify();
  EXPECT_FALSE(gate.gave_up);
  EXPECT_GE(worker.WaitAssignments(2, absl::ToInt64Milliseconds(kPatience)).size(), 2u)
      << "released: proposed, stored and placed";
}

// Issue 22: start-up proposed for every search sweep before serving, so one costly proposal kept the
// coordinator from serving after a restart.
TEST(SearchProposerTest, StartUpServesBeforeProposing) {
  const std::string db = TempDbPath("search_startup");
  Gate gate;
  TestServer server(db);
  server.Stop();
  const int64_t id = StoreSearchSweep(db, SearchSweep());
  server.options().before_proposal_draw = gate.Hook();
  server.Restart();
  ASSERT_TRUE(gate.entered.WaitForNotificationWithTimeout(kPatience)) << "the owed proposal started";
  ExpectPromptAnswers(server, id);
  gate.release.Notify();
  EXPECT_FALSE(gate.gave_up) << "start-up waited for the proposal";
  EXPECT_TRUE(Eventually([&] { return ListRuns(server, id).size() == 2; })) << "parallel 2: two proposals";
}

// An expander that refuses the first `*failures` specs it is given (the points proposals draw), then expands
// with GridExpand.
SweepExpander Refusing(std::shared_ptr<std::atomic<int>> failures) {
  return [failures](const v1::SweepSpec& spec) -> absl::StatusOr<std::vector<NewRun>> {
    if (failures->fetch_sub(1) > 0) {
      return absl::InvalidArgumentError(absl::StrCat("run 0 (optimizer.lr=", spec.grid(0).values(0).label(),
                                                     "): optimizer.lr: value is out of range"));
    }
    return GridExpand(spec);
  };
}

TEST(SearchProposerTest, AnInvalidPointIsDrawnAgainAndTheRunSaysSo) {
  const std::string db = TempDbPath("search_retry");
  auto failures = std::make_shared<std::atomic<int>>(0);
  TestServer server(db, 10000, 5000, Refusing(failures));
  server.Stop();
  v1::SweepSpec spec = SearchSweep();
  spec.mutable_search()->set_parallel(1);
  const int64_t id = StoreSearchSweep(db, spec);
  failures->store(2);
  server.Restart();
  ASSERT_TRUE(Eventually([&] { return ListRuns(server, id).size() == 1; }));
  v1::GetRunRequest get;
  get.set_run_id(ListRuns(server, id)[0].id());
  v1::GetRunResponse run;
  grpc::ClientContext ctx;
  ASSERT_TRUE(server.coordinator().GetRun(&ctx, get, &run).ok());
  ASSERT_GE(run.history_size(), 1);
  EXPECT_EQ(
      run.history(0).reason().rfind("proposed by tpe at attempt 3 of 8: the points drawn before were not "
                                    "valid runs (run 0 (optimizer.lr=",
                                    0),
      0u)
      << run.history(0).reason();
  EXPECT_EQ(GetSweep(server, id).search_ended(), "");
}

// Issue 22: a proposal that failed stopped the sweep silently, and made the coordinator exit at its next
// start-up. Now the search ends with the reason on the sweep, and the coordinator starts, serves, and lets
// the sweep be cancelled.
TEST(SearchProposerTest, NoValidPointEndsTheSearchWithItsReasonAndTheServerServes) {
  const std::string db = TempDbPath("search_ended");
  auto failures = std::make_shared<std::atomic<int>>(0);
  TestServer server(db, 10000, 5000, Refusing(failures));
  server.Stop();
  const int64_t id = StoreSearchSweep(db, SearchSweep());
  failures->store(1 << 30);
  server.Restart();
  ASSERT_TRUE(Eventually([&] { return !GetSweep(server, id).search_ended().empty(); }));
  const std::string reason = GetSweep(server, id).search_ended();
  EXPECT_EQ(
      reason.rfind("proposal 0: none of 8 points drawn is a valid run; the first: run 0 (optimizer.lr=", 0),
      0u)
      << reason;
  EXPECT_TRUE(ListRuns(server, id).empty());
  v1::ListSweepsResponse listed;
  grpc::ClientContext lctx;
  ASSERT_TRUE(server.coordinator().ListSweeps(&lctx, v1::ListSweepsRequest(), &listed).ok());
  EXPECT_EQ(listed.sweeps(0).search_ended(), reason);

  server.Restart();  // Its data does not stop the next start either, and the search stays ended.
  ExpectPromptAnswers(server, id);
  EXPECT_EQ(GetSweep(server, id).search_ended(), reason);
  v1::CancelSweepRequest cancel;
  cancel.set_sweep_id(id);
  v1::CancelSweepResponse cancelled;
  grpc::ClientContext cctx;
  EXPECT_TRUE(server.coordinator().CancelSweep(&cctx, cancel, &cancelled).ok());
  EXPECT_TRUE(GetSweep(server, id).cancelled());
}

// A stored search whose settings fail CheckSearch (here: no random axes left to search) ends with the
// validator's message, proposing nothing.
TEST(SearchProposerTest, StoredSettingsThatCannotBeSearchedEndTheSearch) {
  const std::string db = TempDbPath("search_unsearchable");
  TestServer server(db);
  server.Stop();
  v1::SweepSpec spec = SearchSweep();
  spec.clear_random();
  const int64_t id = StoreSearchSweep(db, spec);
  server.Restart();
  ASSERT_TRUE(Eventually([&] { return !GetSweep(server, id).search_ended().empty(); }));
  EXPECT_EQ(
      GetSweep(server, id).search_ended(),
      "its stored search settings cannot be searched: search: a search needs random axes to search over "
      "(random: {...})");
  EXPECT_TRUE(ListRuns(server, id).empty());
}

// Issue 28: model size as a TPE axis, through the production expander: an integer range over model.depth and
// a choice of model.embed_dim; each proposal trains the size it is labelled with. A choice that no model of
// the space can take is refused at submission, naming the key.
TEST(SearchProposerTest, ModelSizeAxesAreSearched) {
  TestServer server(TempDbPath("search_model_size"), 10000, 5000, ExpandWithSchemas);
  v1::SweepSpec spec = SearchSweep();  // vit_micro_patch4_28: width 64, 4 heads.
  spec.clear_random();
  v1::RandomAxis* depth = spec.add_random();
  depth->set_key("model.depth");
  depth->set_min(1);
  depth->set_max(4);
  depth->set_integer(true);
  v1::RandomAxis* width = spec.add_random();
  width->set_key("model.embed_dim");
  width->add_choices("64");
  width->add_choices("128");
  spec.mutable_search()->set_budget(3);
  spec.mutable_search()->set_parallel(1);
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = spec;
  v1::SubmitSweepResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(server.coordinator().SubmitSweep(&ctx, req, &resp).ok());
  const int64_t id = resp.sweep().id();
  // Each assigned run ends as it comes; a size drawn twice reuses the first one's results, unassigned.
  FakeWorker worker(&server.gateway(), 1);
  auto all_ended = [&] {
    std::vector<v1::Run> runs = ListRuns(server, id);
    for (const v1::Run& r : runs) {
      if (r.state() != v1::SUCCEEDED) return false;
    }
    return runs.size() == 3;
  };
  for (size_t assigned = 0; assigned < 3 && !all_ended(); ++assigned) {
    std::vector<v1::Assignment> got =
        worker.WaitAssignments(assigned + 1, absl::ToInt64Milliseconds(kPatience));
    if (got.size() <= assigned) break;  // Reused: checked below.
    CompleteAssignment(server, worker, assigned + 1);
  }
  ASSERT_TRUE(Eventually(all_ended)) << "the budget of 3 runs, all ended; search ended: "
                                     << GetSweep(server, id).search_ended();
  for (const v1::Run& listed : ListRuns(server, id)) {
    v1::GetRunRequest get;
    get.set_run_id(listed.id());
    v1::GetRunResponse run;
    grpc::ClientContext gctx;
    ASSERT_TRUE(server.coordinator().GetRun(&gctx, get, &run).ok());
    const auto& labels = run.run().labels();
    const int d = std::stoi(labels.at("model.depth"));
    EXPECT_TRUE(d >= 1 && d <= 4) << labels.at("model.depth");
    // A size equal to the model's own (depth 4, width 64) is stored as 0: the canonical spec omits it.
    const absl::StatusOr<ExperimentConfig> stored = ParseExperimentYaml(run.run().resolved_spec(), "run");
    ASSERT_TRUE(stored.ok()) << stored.status();
    const auto stored_depth = static_cast<uint32_t>(stored->model.depth);
    EXPECT_EQ(stored_depth == 0 ? 4u : stored_depth, static_cast<uint32_t>(d));
    const std::string w = labels.at("model.embed_dim");
    EXPECT_TRUE(w == "64" || w == "128") << w;
    const auto stored_width = static_cast<uint32_t>(stored->model.embed_dim);
    EXPECT_EQ(std::to_string(stored_width == 0 ? 64u : stored_width), w);
  }

  width->add_choices("66");  // Not a multiple of the 4 heads.
  *req.mutable_spec() = spec;
  grpc::ClientContext rctx;
  const grpc::Status refused = server.coordinator().SubmitSweep(&rctx, req, &resp);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("model.embed_dim"), std::string::npos) << refused.error_message();
}

}  // namespace
}  // namespace nmsparse::server
