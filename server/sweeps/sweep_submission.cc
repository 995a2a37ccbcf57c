#include "server/sweeps/sweep_submission.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "schemas/dispatch_order.h"
#include "schemas/sweep_blocks.h"
#include "schemas/sweep_size.h"
#include "server/store/clock.h"
#include "server/store/event_table.h"
#include "server/store/run_table.h"
#include "server/store/sweep_table.h"
#include "server/store/worker_table.h"
#include "server/sweeps/search_proposer.h"
#include "server/sweeps/search_space.h"

namespace nmsparse::server {
namespace {

// The first sweep `owner` stored under the spec's idempotency key, with its runs. The same key with another
// spec is a mistake the caller must hear of (ALREADY_EXISTS), not a silent answer with the earlier sweep.
absl::StatusOr<std::optional<v1::SubmitSweepResponse>> Existing(Database* db, const SweepOwner& owner,
                                                                const v1::SweepSpec& spec) {
  NM_ASSIGN_OR_RETURN(std::optional<int64_t> id, FindSweepByKey(db, owner, spec.idempotency_key()));
  if (!id) return std::optional<v1::SubmitSweepResponse>();
  v1::SubmitSweepResponse out;
  NM_ASSIGN_OR_RETURN(*out.mutable_sweep(), LoadSweep(db, *id));
  if (!google::protobuf::util::MessageDifferencer::Equals(out.sweep().spec(), spec)) {
    return absl::AlreadyExistsError(absl::StrCat("idempotency key '", spec.idempotency_key(),
                                                 "' was used for sweep ", *id,
                                                 " with another spec; use a new key "
                                                 "for a different sweep"));
  }
  RunFilter f;
  f.sweep_id = *id;
  NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, QueryRuns(db, f, RunDetail::kSummary));
  for (RunRecord& r : runs) *out.add_runs() = std::move(r.run);
  out.set_existing(true);
  return std::optional<v1::SubmitSweepResponse>(std::move(out));
}

absl::StatusOr<std::vector<NewRun>> Expand(const SweepExpander& expand, const v1::SweepSpec& spec) {
  absl::StatusOr<std::vector<NewRun>> runs = expand(spec);
  if (!runs.ok()) {
    if (runs.status().code() == absl::StatusCode::kInvalidArgument) return runs.status();
    return absl::InvalidArgumentError(absl::StrCat("sweep ", spec.name(), ": ", runs.status().message()));
  }
  if (runs->empty())
    return absl::InvalidArgumentError(absl::StrCat("sweep ", spec.name(), " expands to no run"));
  for (NewRun& r : *runs) ApplySweepSettings(spec, &r);
  return runs;
}

absl::Status CheckFits(Database* db, const v1::SweepSpec& spec, const std::vector<NewRun>& runs) {
  int64_t worker = 0;
  NM_ASSIGN_OR_RETURN(uint32_t largest, LargestWorkerSlots(db, &worker));
  if (largest == 0) return absl::OkStatus();  // No worker registered yet: they may still come.
  for (const NewRun& r : runs) {
    if (r.gpus <= largest) continue;
    std::string key = spec.gpus_per_run() > 0 ? "gpus_per_run" : "resources.gpus";
    return absl::InvalidArgumentError(absl::StrCat(key, ": ", r.gpus, " (run ", r.index,
                                                   ") can never fit: the largest registered worker (", worker,
                                                   ") has ", largest, " slots"));
  }
  return absl::OkStatus();
}

v1::Run RunView(const NewRun& r, int64_t id, int64_t sweep_id, int64_t now_ms, const ReuseSource* reuse,
                bool with_spec) {
  v1::Run run;
  run.set_id(id);
  run.set_sweep_id(sweep_id);
  run.set_index(r.index);
  run.set_content_hash(r.content_hash);
  run.set_state(reuse ? v1::SUCCEEDED : v1::QUEUED);
  run.set_created_at_ms(now_ms);
  run.set_priority(r.priority);
  run.set_max_retries(r.max_retries);
  for (const auto& [k, v] : r.labels) (*run.mutable_labels())[k] = v;
  if (r.lineage.parent_run_id() != 0) *run.mutable_lineage() = r.lineage;
  if (reuse) {
    run.set_reused_from(reuse->run_id);
    run.set_finished_at_ms(now_ms);
    v1::MetricPoint finals;
    finals.ParseFromString(reuse->final_metrics);
    *run.mutable_final_metrics() = finals.values();
  }
  if (with_spec) run.set_resolved_spec(r.resolved_spec);
  return run;
}

// A new run whose spec an earlier run that ended CANCELLED or FAILED had: the answer (not the store) says
// that `nmctl resume` would continue that one from its checkpoint, where this new run starts fresh.
absl::Status NoteResumable(Database* db, v1::Run* view) {
  if (view->reused_from() != 0) return absl::OkStatus();
  NM_ASSIGN_OR_RETURN(std::optional<ResumableRun> earlier, FindResumable(db, view->content_hash()));
  if (!earlier) return absl::OkStatus();
  view->set_message(absl::StrCat("run ", earlier->run_id, " had the same spec and ended ",
                                 v1::RunState_Name(earlier->state),
                                 ": this new run starts fresh; nmctl resume ", earlier->run_id,
                                 " would continue that one from its checkpoint"));
  return absl::OkStatus();
}

absl::StatusOr<std::optional<ReuseSource>> Reusable(Database* db, const v1::SweepSpec& spec,
                                                    const NewRun& r) {
  if (spec.no_reuse()) return std::optional<ReuseSource>();
  NM_ASSIGN_OR_RETURN(std::optional<ReuseSource> found, FindSucceeded(db, r.content_hash));
  // A dense run that succeeded before dense runs ignored their N:M keys is stored under its old hash.
  if (found || r.legacy_content_hash.empty()) return found;
  return FindSucceeded(db, r.legacy_content_hash);
}

absl::StatusOr<v1::SubmitSweepResponse> DryRun(Store* store, const v1::SweepSpec& spec,
                                               const std::vector<NewRun>& runs) {
  v1::SubmitSweepResponse out;
  out.mutable_sweep()->set_name(spec.name());
  *out.mutable_sweep()->mutable_spec() = spec;
  NM_RETURN_IF_ERROR(store->Read([&](Database* db) -> absl::Status {
    for (const NewRun& r : runs) {
      NM_ASSIGN_OR_RETURN(std::optional<ReuseSource> reuse, Reusable(db, spec, r));
      v1::Run view = RunView(r, 0, 0, 0, reuse ? &*reuse : nullptr, /*with_spec=*/true);
      NM_RETURN_IF_ERROR(NoteResumable(db, &view));
      (*out.mutable_sweep()->mutable_run_counts())[v1::RunState_Name(view.state())]++;
      *out.add_runs() = std::move(view);
    }
    return absl::OkStatus();
  }));
  return out;
}

// Grid order, or for a sweep with early stopping the seeded shuffle that makes ASHA's decisions independent
// of how the axes were written (schemas/dispatch_order.h).
std::vector<size_t> StorageOrder(const v1::SweepSpec& spec, const std::vector<NewRun>& runs) {
  if (spec.early_stopping().policy().empty()) {
    std::vector<size_t> order(runs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    return order;
  }
  std::vector<std::string> hashes;
  for (const NewRun& r : runs) hashes.push_back(r.content_hash);
  return DispatchOrder(spec.seed(), hashes);
}

// What a new run's first state change says: a fork names its parent.
std::string CreationReason(const NewRun& r) {
  if (r.lineage.parent_run_id() == 0) return "submitted";
  return absl::StrCat("forked from run ", r.lineage.parent_run_id(), " (attempt ", r.lineage.parent_attempt(),
                      ", step ", r.lineage.parent_step(), ")");
}

}  // namespace

absl::StatusOr<v1::Run> StoreRun(Database* db, const v1::SweepSpec& spec, int64_t sweep_id, const NewRun& r,
                                 int64_t now_ms, const std::string& why) {
  NM_ASSIGN_OR_RETURN(std::optional<ReuseSource> reuse, Reusable(db, spec, r));
  const ReuseSource* src = reuse ? &*reuse : nullptr;
  NM_ASSIGN_OR_RETURN(int64_t id, InsertRun(db, sweep_id, r, now_ms, src));
  NM_RETURN_IF_ERROR(AppendStateChange(db, id, v1::RUN_STATE_UNSPECIFIED, src ? v1::SUCCEEDED : v1::QUEUED, 0,
                                       now_ms,
                                       src ? absl::StrCat("reused results of run ", src->run_id) : why));
  v1::Run view = RunView(r, id, sweep_id, now_ms, src, /*with_spec=*/false);
  NM_RETURN_IF_ERROR(NoteResumable(db, &view));
  return view;
}

void ApplySweepSettings(const v1::SweepSpec& spec, NewRun* r) {
  if (spec.gpus_per_run() > 0) r->gpus = spec.gpus_per_run();
  if (r->gpus == 0) r->gpus = 1;
  r->priority = spec.priority();
  r->max_retries = spec.max_retries();
}

absl::Status StoreSweep(Database* db, const v1::SweepSpec& spec, const std::vector<NewRun>& runs,
                        const SweepOwner& owner, v1::SubmitSweepResponse* out) {
  int64_t now = NowMs();
  NM_ASSIGN_OR_RETURN(int64_t sweep_id, InsertSweep(db, spec, now, owner));
  // The queue serves runs of equal priority by id, so the order they are stored in is the order they run.
  for (size_t i : StorageOrder(spec, runs)) {
    NM_ASSIGN_OR_RETURN(*out->add_runs(),
                        StoreRun(db, spec, sweep_id, runs[i], now, CreationReason(runs[i])));
    out->mutable_runs()->rbegin()->set_submitted_by(owner.name);
  }
  // The answer lists the runs in grid order, as every other listing of a sweep does.
  std::stable_sort(out->mutable_runs()->begin(), out->mutable_runs()->end(),
                   [](const v1::Run& a, const v1::Run& b) { return a.index() < b.index(); });
  NM_ASSIGN_OR_RETURN(*out->mutable_sweep(), LoadSweep(db, sweep_id));
  return absl::OkStatus();
}

absl::StatusOr<v1::SubmitSweepResponse> SubmitSweep(Store* store, const SweepExpander& expand,
                                                    int64_t max_runs, const v1::SubmitSweepRequest& request,
                                                    const SweepOwner& owner) {
  // An objective without a mode takes its metric's declared direction, stored with the sweep.
  v1::SweepSpec spec = request.spec();
  NM_RETURN_IF_ERROR(FillObjectiveModes(&spec));
  NM_RETURN_IF_ERROR(CheckSweepRunCount(spec, max_runs, "nmserver --max_runs_per_sweep"));
  NM_RETURN_IF_ERROR(CheckEarlyStopping(spec));
  NM_RETURN_IF_ERROR(CheckSearch(spec));
  std::optional<v1::SubmitSweepResponse> existing;
  if (!request.dry_run()) {
    NM_RETURN_IF_ERROR(store->Read([&](Database* db) -> absl::Status {
      NM_ASSIGN_OR_RETURN(existing, Existing(db, owner, spec));
      return absl::OkStatus();
    }));
    if (existing) return *std::move(existing);
  }
  // A search sweep's space is checked whole, since its runs are proposed later
  // (server/sweeps/search_space.h); it starts with its first proposals, and the others come as runs finish
  // (server/sweeps/search_proposer.h).
  if (!spec.search().algorithm().empty()) NM_RETURN_IF_ERROR(CheckSearchSpace(expand, spec));
  NM_ASSIGN_OR_RETURN(std::vector<NewRun> runs, spec.search().algorithm().empty()
                                                    ? Expand(expand, spec)
                                                    : InitialProposals(expand, spec));
  NM_RETURN_IF_ERROR(store->Read([&](Database* db) { return CheckFits(db, spec, runs); }));
  if (request.dry_run()) return DryRun(store, spec, runs);
  v1::SubmitSweepResponse out;
  NM_RETURN_IF_ERROR(store->Write([&](Database* db) -> absl::Status {
    out.Clear();
    // Checked again inside the transaction: two concurrent submissions with one key store one sweep.
    NM_ASSIGN_OR_RETURN(existing, Existing(db, owner, spec));
    if (existing) return absl::OkStatus();
    return StoreSweep(db, spec, runs, owner, &out);
  }));
  if (existing) return *std::move(existing);
  return out;
}

}  // namespace nmsparse::server
