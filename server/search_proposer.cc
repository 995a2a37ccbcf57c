#include "server/search_proposer.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "server/store/clock.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/status_macros.h"
#include "server/store/sweep_table.h"
#include "server/sweep_submission.h"
#include "server/tpe_sampler.h"

namespace nmsparse::server {
namespace {

TpeSampler SamplerOf(const v1::SweepSpec& spec) {
  return TpeSampler({spec.random().begin(), spec.random().end()}, spec.search());
}

// Proposal `index` as a run: the sweep with its random axes turned into one-value grid axes.
absl::StatusOr<NewRun> ExpandProposal(const SweepExpander& expand, const v1::SweepSpec& spec, uint32_t index,
                                      const std::vector<std::string>& values) {
  v1::SweepSpec one = spec;
  one.clear_random();
  one.clear_search();
  one.clear_num_samples();
  for (int a = 0; a < spec.random_size(); ++a) {
    v1::GridAxis* axis = one.add_grid();
    axis->set_name(spec.random(a).key());
    v1::AxisValue* value = axis->add_values();
    value->set_label(values[a]);
    (*value->mutable_set())[spec.random(a).key()] = values[a];
  }
  absl::StatusOr<std::vector<NewRun>> runs = expand(one);
  if (!runs.ok()) {
    return absl::Status(runs.status().code(),
                        absl::StrCat("search proposal ", index, ": ", runs.status().message()));
  }
  if (runs->size() != 1) return absl::InternalError("a search proposal expanded to more than one run");
  NewRun run = std::move(runs->front());
  run.index = index;
  ApplySweepSettings(spec, &run);
  return run;
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

// Proposes and stores at most one run; false when the sweep is owed none.
absl::StatusOr<bool> ProposeOne(Database* db, const SweepExpander& expand, const v1::Sweep& sweep) {
  const v1::SweepSpec& spec = sweep.spec();
  RunFilter f;
  f.sweep_id = sweep.id();
  NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, QueryRuns(db, f, RunDetail::kSummary));
  int unfinished = 0;
  for (const RunRecord& r : runs) unfinished += IsFinal(r.run.state()) ? 0 : 1;
  const uint32_t parallel = std::max<uint32_t>(1, spec.search().parallel());
  if (runs.size() >= spec.search().budget() || static_cast<uint32_t>(unfinished) >= parallel) return false;
  const uint32_t index = static_cast<uint32_t>(runs.size());
  NM_ASSIGN_OR_RETURN(std::vector<std::string> values, SamplerOf(spec).Propose(index, Results(spec, runs)));
  NM_ASSIGN_OR_RETURN(NewRun run, ExpandProposal(expand, spec, index, values));
  NM_RETURN_IF_ERROR(StoreRun(db, spec, sweep.id(), run, NowMs(), "proposed by tpe").status());
  return true;
}

}  // namespace

absl::StatusOr<std::vector<NewRun>> InitialProposals(const SweepExpander& expand, const v1::SweepSpec& spec) {
  const uint32_t n = std::min(std::max<uint32_t>(1, spec.search().parallel()), spec.search().budget());
  const TpeSampler sampler = SamplerOf(spec);
  std::vector<NewRun> runs;
  for (uint32_t i = 0; i < n; ++i) {
    NM_ASSIGN_OR_RETURN(std::vector<std::string> values, sampler.Propose(i, {}));
    NM_ASSIGN_OR_RETURN(NewRun run, ExpandProposal(expand, spec, i, values));
    runs.push_back(std::move(run));
  }
  return runs;
}

absl::StatusOr<int> SearchProposer::Refill(int64_t sweep_id) {
  int added = 0;
  NM_RETURN_IF_ERROR(store_->Write([&](Database* db) -> absl::Status {
    added = 0;
    NM_ASSIGN_OR_RETURN(v1::Sweep sweep, LoadSweep(db, sweep_id));
    if (sweep.spec().search().algorithm().empty() || sweep.cancelled()) return absl::OkStatus();
    // One at a time: a proposal reused from an identical succeeded run ends at once and frees its place.
    while (true) {
      NM_ASSIGN_OR_RETURN(bool proposed, ProposeOne(db, expand_, sweep));
      if (!proposed) return absl::OkStatus();
      ++added;
    }
  }));
  return added;
}

absl::StatusOr<int> SearchProposer::RefillAll() {
  std::vector<int64_t> ids;
  NM_RETURN_IF_ERROR(store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(std::vector<v1::Sweep> sweeps, ListSweeps(db));
    for (const v1::Sweep& s : sweeps) {
      if (!s.spec().search().algorithm().empty() && !s.cancelled()) ids.push_back(s.id());
    }
    return absl::OkStatus();
  }));
  int added = 0;
  for (int64_t id : ids) {
    NM_ASSIGN_OR_RETURN(int n, Refill(id));
    added += n;
  }
  return added;
}

}  // namespace nmsparse::server
