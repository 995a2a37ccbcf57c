#include "server/sweeps/search_proposer.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "schemas/limits.h"
#include "schemas/sweep_blocks.h"
#include "server/search/tpe_sampler.h"
#include "server/store/clock.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/sweep_table.h"
#include "server/sweeps/search_space.h"
#include "server/sweeps/sweep_submission.h"

namespace nmsparse::server {
namespace {

TpeSampler SamplerOf(const v1::SweepSpec& spec) {
  return TpeSampler({spec.random().begin(), spec.random().end()}, spec.search());
}

// The SUCCEEDED runs' axis values and metric, in run order.
std::vector<TpeResult> Results(const v1::SweepSpec& spec, const std::vector<RunRecord>& runs) {
  std::vector<TpeResult> out;
  for (const RunRecord& r : runs) {
    auto metric = r.run.final_metrics().find(spec.search().metric());
    if (r.run.state() != v1::SUCCEEDED || metric == r.run.final_metrics().end()) continue;
    TpeResult result{{}, metric->second};
    for (const v1::RandomAxis& axis : spec.random()) {
      auto label = r.run.labels().find(axis.key());
      result.values.push_back(label == r.run.labels().end() ? "" : label->second);
    }
    out.push_back(std::move(result));
  }
  return out;
}

// A proposal: the run to store and its first state change's reason, or why the search ends.
struct Proposal {
  std::optional<NewRun> run;
  std::string why;
  std::string end_reason;
};

// Draws proposal `index` given `results`: up to kMaxProposalAttempts points, until one is a valid run.
Proposal DrawUncut(const SweepExpander& expand, const v1::SweepSpec& spec, uint32_t index,
                   const std::vector<TpeResult>& results, const std::function<void()>& before_draw) {
  Proposal p;
  if (absl::Status s = CheckSearch(spec); !s.ok()) {
    p.end_reason = absl::StrCat("its stored search settings cannot be searched: ", s.message());
    return p;
  }
  const TpeSampler sampler = SamplerOf(spec);
  std::string first_error;
  for (uint32_t attempt = 0; attempt < kMaxProposalAttempts; ++attempt) {
    if (before_draw) before_draw();
    absl::StatusOr<std::vector<std::string>> values = sampler.Propose(index, results, attempt);
    if (!values.ok()) {
      p.end_reason = absl::StrCat("proposal ", index, ": ", values.status().message());
      return p;
    }
    absl::StatusOr<NewRun> run = ExpandPoint(expand, spec, index, *values);
    if (run.ok()) {
      p.run = *std::move(run);
      p.why = attempt == 0
                  ? "proposed by tpe"
                  : absl::StrCat("proposed by tpe at attempt ", attempt + 1, " of ", kMaxProposalAttempts,
                                 ": the points drawn before were not valid runs (", first_error, ")");
      return p;
    }
    if (first_error.empty()) first_error = std::string(run.status().message());
  }
  p.end_reason = absl::StrCat("proposal ", index, ": none of ", kMaxProposalAttempts,
                              " points drawn is a valid run; the first: ", first_error);
  return p;
}

// DrawUncut, its reasons cut like a log line (they quote points and errors, which hold user text, and they
// are logged too).
Proposal Draw(const SweepExpander& expand, const v1::SweepSpec& spec, uint32_t index,
              const std::vector<TpeResult>& results, const std::function<void()>& before_draw) {
  Proposal p = DrawUncut(expand, spec, index, results, before_draw);
  p.why = limits::CutLogLine(p.why);
  p.end_reason = limits::CutLogLine(p.end_reason);
  return p;
}

// What a search sweep is owed now, read in one go.
struct Owed {
  v1::SweepSpec spec;
  uint32_t index = 0;  // The next run's index: the sweep's run count.
  std::vector<TpeResult> results;
};

bool Searching(const v1::Sweep& sweep) {
  return !sweep.spec().search().algorithm().empty() && !sweep.cancelled() && sweep.search_ended().empty();
}

// Nothing when the sweep is owed no run (no search, cancelled, ended, at its budget or its parallel runs).
absl::StatusOr<std::optional<Owed>> ReadOwed(Database* db, int64_t sweep_id) {
  NM_ASSIGN_OR_RETURN(v1::Sweep sweep, LoadSweepWithoutGrid(db, sweep_id));
  if (!Searching(sweep)) return std::optional<Owed>();
  // From the kept counts: a sweep at its budget or its parallel runs costs no read of its runs.
  uint32_t total = 0;
  uint32_t unfinished = 0;
  for (const auto& [state, n] : sweep.run_counts()) {
    v1::RunState s = v1::RUN_STATE_UNSPECIFIED;
    v1::RunState_Parse(state, &s);
    total += n;
    unfinished += IsFinal(s) ? 0 : n;
  }
  const v1::Search& search = sweep.spec().search();
  const uint32_t parallel = std::max<uint32_t>(1, search.parallel());
  if (total >= search.budget() || unfinished >= parallel) return std::optional<Owed>();
  RunFilter f;
  f.sweep_id = sweep_id;
  NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, QueryRuns(db, f, RunDetail::kSummary));
  Owed owed;
  NM_ASSIGN_OR_RETURN(v1::Sweep full, LoadSweep(db, sweep_id));  // Proposals expand the grid too.
  owed.spec = full.spec();
  owed.index = static_cast<uint32_t>(runs.size());
  owed.results = Results(owed.spec, runs);
  return std::optional<Owed>(std::move(owed));
}

// Stores the proposal (the run, or the end of the search) unless the sweep changed since it was read: it was
// cancelled, its search ended, or it has another number of runs. Returns whether it was stored.
absl::StatusOr<bool> Commit(Database* db, int64_t sweep_id, const Owed& owed, const Proposal& p) {
  NM_ASSIGN_OR_RETURN(v1::Sweep sweep, LoadSweepWithoutGrid(db, sweep_id));
  if (!Searching(sweep)) return false;
  uint32_t runs = 0;
  for (const auto& [state, n] : sweep.run_counts()) runs += n;
  if (runs != owed.index) return false;
  if (!p.end_reason.empty()) {
    NM_RETURN_IF_ERROR(EndSearch(db, sweep_id, p.end_reason));
    return true;
  }
  NM_RETURN_IF_ERROR(StoreRun(db, owed.spec, sweep_id, *p.run, NowMs(), p.why).status());
  return true;
}

}  // namespace

absl::StatusOr<std::vector<NewRun>> InitialProposals(const SweepExpander& expand, const v1::SweepSpec& spec) {
  const uint32_t n = std::min(std::max<uint32_t>(1, spec.search().parallel()), spec.search().budget());
  std::vector<NewRun> runs;
  for (uint32_t i = 0; i < n; ++i) {
    Proposal p = Draw(expand, spec, i, {}, nullptr);
    if (!p.run) return absl::InvalidArgumentError(absl::StrCat("search: ", p.end_reason));
    runs.push_back(*std::move(p.run));
  }
  return runs;
}

void SearchProposer::Start() {
  NotifyAll();
  loop_.Start(absl::Seconds(1), [this] { Pass(); });
}

void SearchProposer::Stop() { loop_.Stop(); }

void SearchProposer::Notify(int64_t sweep_id) {
  {
    absl::MutexLock lock(&mu_);
    pending_.insert(sweep_id);
  }
  loop_.Wake();
}

void SearchProposer::NotifyAll() {
  {
    absl::MutexLock lock(&mu_);
    all_pending_ = true;
  }
  loop_.Wake();
}

void SearchProposer::Pass() {
  std::set<int64_t> ids;
  bool all = false;
  {
    absl::MutexLock lock(&mu_);
    ids.swap(pending_);
    std::swap(all, all_pending_);
  }
  // What failed on the store is retried at the next period, not at once.
  int added = 0;
  bool retry_all = false;
  std::set<int64_t> retry;
  if (all) {
    absl::StatusOr<int> n = RefillAll();
    if (n.ok()) added += *n;
    retry_all = !n.ok();
    if (!n.ok()) std::fprintf(stderr, "nmserver: proposing runs failed: %s\n", n.status().ToString().c_str());
  }
  for (int64_t id : ids) {
    absl::StatusOr<int> n = Refill(id);
    if (n.ok()) added += *n;
    if (n.ok() || absl::IsNotFound(n.status())) continue;
    retry.insert(id);
    std::fprintf(stderr, "nmserver: sweep %lld: proposing runs failed: %s\n", static_cast<long long>(id),
                 n.status().ToString().c_str());
  }
  if (retry_all || !retry.empty()) {
    absl::MutexLock lock(&mu_);
    all_pending_ = all_pending_ || retry_all;
    pending_.insert(retry.begin(), retry.end());
  }
  if (added > 0 && on_proposed_) on_proposed_();
}

absl::StatusOr<int> SearchProposer::Refill(int64_t sweep_id) {
  int added = 0;
  while (true) {
    std::optional<Owed> owed;
    NM_RETURN_IF_ERROR(store_->Read([&](Database* db) -> absl::Status {
      NM_ASSIGN_OR_RETURN(owed, ReadOwed(db, sweep_id));
      return absl::OkStatus();
    }));
    if (!owed) return added;
    // No lock is held here: however long the draw takes, the coordinator goes on answering.
    const Proposal p = Draw(expand_, owed->spec, owed->index, owed->results, [&] {
      if (before_draw_) before_draw_(sweep_id);
    });
    bool stored = false;
    NM_RETURN_IF_ERROR(store_->Write([&](Database* db) -> absl::Status {
      NM_ASSIGN_OR_RETURN(stored, Commit(db, sweep_id, *owed, p));
      return absl::OkStatus();
    }));
    if (!stored) continue;  // The sweep changed meanwhile: read it again.
    if (!p.end_reason.empty()) {
      std::fprintf(stderr, "nmserver: sweep %lld: search ended: %s\n", static_cast<long long>(sweep_id),
                   p.end_reason.c_str());
      return added;
    }
    ++added;
  }
}

absl::StatusOr<int> SearchProposer::RefillAll() {
  std::vector<int64_t> ids;
  NM_RETURN_IF_ERROR(store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(std::vector<v1::Sweep> sweeps, ListSweeps(db));
    for (const v1::Sweep& s : sweeps) {
      if (Searching(s)) ids.push_back(s.id());
    }
    return absl::OkStatus();
  }));
  int added = 0;
  absl::Status first_error;
  for (int64_t id : ids) {
    absl::StatusOr<int> n = Refill(id);  // One sweep's failure does not keep the others waiting.
    if (n.ok()) added += *n;
    if (!n.ok() && first_error.ok()) first_error = n.status();
  }
  if (!first_error.ok()) return first_error;
  return added;
}

}  // namespace nmsparse::server
