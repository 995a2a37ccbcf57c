#include "server/sweeps/run_fork.h"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "schemas/base_spec.h"
#include "schemas/content_hash.h"
#include "schemas/experiment_config.h"
#include "schemas/model_arch_text.h"
#include "schemas/model_resolution.h"
#include "schemas/spec_overrides.h"
#include "schemas/train_steps.h"
#include "schemas/trained_epochs.h"
#include "server/store/run_transitions.h"
#include "server/store/sweep_table.h"
#include "server/sweeps/sweep_submission.h"

namespace nmsparse::server {
namespace {

// Keys a fork keeps from its parent: the trainer refuses a checkpoint written under another seed or precision
// (worker/trainer/checkpoint/resume.cc). The model is compared as the architecture it resolves to
// (CheckSameArchitecture).
constexpr const char* kKeptKeys[] = {"seed", "resources.precision"};

std::string ForkName(int64_t parent_id) { return absl::StrCat("fork of run ", parent_id); }

absl::Status CheckForkable(const RunRecord& parent, const RecordedProgress& progress) {
  const v1::Run& run = parent.run;
  if (!IsFinal(run.state())) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", run.id(), " is ", v1::RunState_Name(run.state()),
                     ": only a finished run (SUCCEEDED, FAILED or CANCELLED) can be forked"));
  }
  if (run.reused_from() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", run.id(), " reused the results of run ", run.reused_from(),
                     " and has no checkpoint of its own: fork run ", run.reused_from(), " instead"));
  }
  if (progress.step == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", run.id(), " recorded no training step, so it has no checkpoint to fork from"));
  }
  return absl::OkStatus();
}

// The YAML text at a key path of a spec's canonical form ("" when absent).
std::string ValueAt(const ExperimentConfig& spec, const std::string& key_path) {
  YAML::Node node = ExperimentConfigToYaml(spec);
  for (absl::string_view part : absl::StrSplit(key_path, '.')) {
    if (!node.IsMap()) return "";
    node = node[std::string(part)];
    if (!node) return "";
  }
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

// The --set key that changed `kept` (itself or a key under it), or `kept` when none names it.
std::string ChangingKey(const std::string& kept, const v1::ForkRunRequest& request) {
  for (const std::string& assignment : request.set()) {
    const std::string key = assignment.substr(0, assignment.find('='));
    if (key == kept || absl::StartsWith(key, kept + ".")) return key;
  }
  return kept;
}

absl::Status CheckKeptKeys(int64_t parent_id, const ExperimentConfig& parent, const ExperimentConfig& fork,
                           const v1::ForkRunRequest& request) {
  for (const char* kept : kKeptKeys) {
    if (ValueAt(parent, kept) == ValueAt(fork, kept)) continue;
    const std::string key = ChangingKey(kept, request);
    return absl::InvalidArgumentError(absl::StrCat(
        ForkName(parent_id), ": ", key, ": ", ValueAt(fork, key), " differs from the parent's ",
        ValueAt(parent, key), "; a fork starts from its parent's checkpoint and keeps its ", kept));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ArchitectureOf(const ExperimentConfig& spec) {
  NM_ASSIGN_OR_RETURN(ModelArch arch, ResolveModel(spec.model));
  return ArchitectureText(arch);
}

// The checkpoint holds the parent's weights: the fork may respell its model (another catalogue name, a kwarg
// at its value) or change its dropout rates, but not build another architecture. Names each resolved key
// that differs, both values, and the --set keys under model that changed it.
absl::Status CheckSameArchitecture(int64_t parent_id, const ExperimentConfig& parent,
                                   const ExperimentConfig& fork, const v1::ForkRunRequest& request) {
  NM_ASSIGN_OR_RETURN(std::string before, ArchitectureOf(parent));
  absl::StatusOr<std::string> after = ArchitectureOf(fork);
  if (!after.ok()) {
    return absl::Status(after.status().code(),
                        absl::StrCat(ForkName(parent_id), ": ", after.status().message()));
  }
  const std::vector<ArchitectureDifference> differences = ArchitectureDifferences(before, *after);
  if (differences.empty()) return absl::OkStatus();
  std::vector<std::string> sets;
  for (const std::string& assignment : request.set()) {
    if (absl::StartsWith(assignment, "model.")) sets.push_back(assignment);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      ForkName(parent_id), ": ", DescribeDifferences(differences, "the parent's"), " (--set ",
      absl::StrJoin(sets, " "),
      "); a fork starts from its parent's checkpoint and keeps its architecture (fork the run of that size, "
      "or submit a new run)"));
}

// The fork continues from its parent's checkpoint, so its schedule must reach the parent's step: in steps
// where the spec tells the steps per epoch, else in epochs.
absl::Status CheckScheduleReaches(int64_t parent_id, const ExperimentConfig& fork,
                                  const RecordedProgress& progress) {
  const int epochs = TrainedEpochs(fork.schedule);
  const std::optional<int64_t> per_epoch = StepsPerEpoch(fork);
  if (per_epoch) {
    const int64_t total = *per_epoch * epochs;
    if (total >= static_cast<int64_t>(progress.step)) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        ForkName(parent_id), ": schedule: its ", epochs, " trained epochs make ", total, " steps (",
        *per_epoch, " per epoch), fewer than step ", progress.step, " where run ", parent_id,
        " got to; the fork continues from there, so its schedule must be at least as long"));
  }
  // progress.epoch is 0-based: a run that got into it needs one epoch more.
  if (epochs > static_cast<int64_t>(progress.epoch)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(ForkName(parent_id), ": schedule: its ", epochs, " trained epochs end before epoch ",
                   progress.epoch + 1, " where run ", parent_id, " got to; the fork continues from there"));
}

bool SetsKey(const v1::ForkRunRequest& request, const std::string& key) {
  for (const std::string& assignment : request.set()) {
    if (absl::StartsWith(assignment, key + "=")) return true;
  }
  return false;
}

// A fork that names another weights file and keeps its parent's digest would be refused by nmtrain at start
// (the digest is not the new file's): refused here, naming both keys. nmctl fills the digest in.
absl::Status CheckDigestFollowsFile(int64_t parent_id, const ModelConfig& parent, const ModelConfig& fork,
                                    const v1::ForkRunRequest& request) {
  if (fork.initial_checkpoint == parent.initial_checkpoint || fork.initial_checkpoint.empty() ||
      parent.initial_checkpoint_sha256.empty() || SetsKey(request, "model.initial_checkpoint_sha256")) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      ForkName(parent_id), ": --set model.initial_checkpoint=", fork.initial_checkpoint,
      " needs --set model.initial_checkpoint_sha256 beside it: the parent's ",
      parent.initial_checkpoint_sha256, " is of ", parent.initial_checkpoint,
      " (nmctl fork fills it in where it can read the file; else sha256sum FILE on the worker)"));
}

absl::StatusOr<NewRun> ExpandFork(const v1::SweepSpec& sweep, const SweepExpander& expand,
                                  int64_t parent_id) {
  absl::StatusOr<std::vector<NewRun>> runs = expand(sweep);
  if (!runs.ok()) {
    return absl::Status(runs.status().code(),
                        absl::StrCat(ForkName(parent_id), ": ", runs.status().message()));
  }
  if (runs->size() != 1) {
    return absl::InternalError(absl::StrCat(ForkName(parent_id), " expanded to ", runs->size(), " runs"));
  }
  return std::move((*runs)[0]);
}

// The lineage goes into the content hash: the same spec trained from a checkpoint is another result than
// trained from scratch, and a fork of another attempt of the parent starts from another checkpoint.
std::string LineageHash(const std::string& spec_hash, const v1::RunLineage& lineage) {
  return Sha256Hex(absl::StrCat(spec_hash, "\nforked_from: run ", lineage.parent_run_id(), " attempt ",
                                lineage.parent_attempt(), "\n"));
}

}  // namespace

absl::StatusOr<ForkPlan> PlanFork(const RunRecord& parent, const std::string& parent_sweep_name,
                                  const RecordedProgress& progress, const v1::ForkRunRequest& request,
                                  const SweepExpander& expand) {
  const int64_t parent_id = parent.run.id();
  NM_RETURN_IF_ERROR(CheckForkable(parent, progress));
  ForkPlan plan;
  absl::StatusOr<ExperimentConfig> parent_spec = ParseExperimentYaml(parent.run.resolved_spec(), "");
  if (!parent_spec.ok()) {
    return absl::Status(
        parent_spec.status().code(),
        absl::StrCat(ForkName(parent_id), ": the parent's spec: ", parent_spec.status().message()));
  }
  const std::vector<std::string> sets(request.set().begin(), request.set().end());
  absl::StatusOr<ExperimentConfig> spec = ApplySetOverrides(sets, *parent_spec);
  if (!spec.ok()) {
    return absl::Status(spec.status().code(),
                        absl::StrCat(ForkName(parent_id), ": ", spec.status().message()));
  }
  NM_RETURN_IF_ERROR(CheckKeptKeys(parent_id, *parent_spec, *spec, request));
  NM_RETURN_IF_ERROR(CheckSameArchitecture(parent_id, *parent_spec, *spec, request));
  NM_RETURN_IF_ERROR(CheckDigestFollowsFile(parent_id, parent_spec->model, spec->model, request));
  NM_RETURN_IF_ERROR(CheckScheduleReaches(parent_id, *spec, progress));
  plan.sweep.set_base(BaseSpecYaml(*spec));
  plan.sweep.set_name(absl::StrCat(parent_sweep_name, "-fork-of-", parent_id));
  plan.sweep.set_priority(request.priority());
  plan.sweep.set_max_retries(parent.run.max_retries());
  plan.sweep.set_no_reuse(request.no_reuse());
  NM_ASSIGN_OR_RETURN(plan.run, ExpandFork(plan.sweep, expand, parent_id));
  NewRun& run = plan.run;
  if (!SetsKey(request, "resources.gpus")) run.gpus = parent.gpus;
  if (run.gpus == 0) run.gpus = 1;
  run.priority = request.priority();
  run.max_retries = parent.run.max_retries();
  run.labels.clear();
  for (const std::string& axis : parent.label_order)
    run.labels.emplace_back(axis, parent.run.labels().at(axis));
  run.labels.emplace_back("fork_of", absl::StrCat(parent_id));
  run.lineage.set_parent_run_id(parent_id);
  run.lineage.set_parent_attempt(parent.run.attempt());
  run.lineage.set_parent_step(progress.step);
  for (const std::string& s : sets) run.lineage.add_overrides(s);
  run.content_hash = LineageHash(run.content_hash, run.lineage);
  return plan;
}

absl::StatusOr<v1::ForkRunResponse> ForkRun(Store* store, const SweepExpander& expand,
                                            const v1::ForkRunRequest& request, const Caller& caller) {
  RunRecord parent;
  std::string sweep_name;
  RecordedProgress progress;
  SweepOwner owner;
  NM_RETURN_IF_ERROR(store->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(parent, LoadRun(db, request.run_id(), RunDetail::kFull));
    NM_ASSIGN_OR_RETURN(v1::Sweep sweep, LoadSweep(db, parent.run.sweep_id()));
    sweep_name = sweep.name();
    NM_ASSIGN_OR_RETURN(owner, LoadSweepOwner(db, parent.run.sweep_id()));
    NM_ASSIGN_OR_RETURN(progress, LastRecordedProgress(db, request.run_id()));
    return absl::OkStatus();
  }));
  NM_RETURN_IF_ERROR(CheckMayChange(caller, "fork", owner, absl::StrCat("run ", request.run_id())));
  NM_ASSIGN_OR_RETURN(ForkPlan plan, PlanFork(parent, sweep_name, progress, request, expand));
  v1::SubmitSweepResponse stored;
  NM_RETURN_IF_ERROR(store->Write([&](Database* db) -> absl::Status {
    stored.Clear();
    // Planned outside the transaction (expansion can be slow): the parent must still be where it was.
    NM_ASSIGN_OR_RETURN(RunRecord now, LoadRun(db, request.run_id(), RunDetail::kSummary));
    if (now.run.state() != parent.run.state() || now.run.attempt() != parent.run.attempt()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "run ", request.run_id(), " changed while forking (now ", v1::RunState_Name(now.run.state()),
          ", attempt ", now.run.attempt(), "); fork it again"));
    }
    return StoreSweep(db, plan.sweep, {plan.run}, OwnerOf(caller), &stored);
  }));
  v1::ForkRunResponse out;
  *out.mutable_sweep() = std::move(*stored.mutable_sweep());
  *out.mutable_run() = std::move(*stored.mutable_runs(0));
  return out;
}

}  // namespace nmsparse::server
