#include "worker/trainer/checkpoint/resume.h"

#include <torch/torch.h>

#include <stdexcept>

#include "worker/trainer/checkpoint/checkpoint_architecture.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {
namespace {

// Loads the checkpoint in `dir` when there is one; its sparsity state goes to `sparsity`.
// `loaded_from` gets the file used (the previous checkpoint when the latest is damaged).
bool LoadIfPresent(const ResumeRequest& r, const std::string& dir, torch::nn::Module& model,
                   torch::optim::Optimizer& optimizer, SparsityMethod& sparsity, TrainState& state,
                   std::string* loaded_from) {
  if (std::optional<std::string> recorded = ReadCheckpointArchitecture(dir)) {
    CheckCheckpointArchitecture(*recorded, r.architecture, dir);
  }
  try {
    NamedTensors masks;
    if (!LoadCheckpoint(dir, model, optimizer, &state, r.device, &masks, loaded_from)) return false;
    if (absl::Status loaded = sparsity.LoadStateDict(masks); !loaded.ok())
      throw std::runtime_error(std::string(loaded.message()));
    return true;
  } catch (const std::exception& e) {
    throw TrainerError(kExitTraining, e.what());
  }
}

void CheckSameRun(const ResumeRequest& r, const std::string& dir, const TrainState& state) {
  if (state.seed != r.seed) {
    throw TrainerError(kExitUsage, "seed " + std::to_string(r.seed) + " differs from the checkpoint's " +
                                       std::to_string(state.seed) + " in " + dir);
  }
  // The checkpoint's fp32 weights would load under either precision, but the run would then be neither the
  // one its spec (and content hash) names nor the one that wrote it.
  if (state.precision != r.precision) {
    throw TrainerError(kExitUsage, "resources.precision " + r.precision + " differs from the checkpoint's " +
                                       state.precision + " in " + dir +
                                       ": a run keeps its precision (use another --out)");
  }
}

// Each rank continues its own dropout / drop-path draws; checkpoints written before every rank's state was
// kept (or by another number of ranks) have only rank 0's: the others then reseed.
void RestoreRankGenerator(const ResumeRequest& r, const TrainState& state) {
  if (state.rank_rngs.defined() && state.rank_rngs.size(0) == r.world_size) {
    SetCpuRngState(state.rank_rngs[r.rank].contiguous());
  } else if (r.rank > 0) {
    torch::manual_seed(r.seed + 7919 * r.rank + state.global_step);
  }
}

// A fork's start: its parent's checkpoint, which must be there and not past this run's schedule.
void LoadForkStart(const ResumeRequest& r, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                   SparsityMethod& sparsity, TrainState& state, std::string* loaded_from) {
  if (!LoadIfPresent(r, r.init_from, model, optimizer, sparsity, state, loaded_from)) {
    throw TrainerError(kExitUsage, "fork: no parent checkpoint " + CheckpointPath(r.init_from));
  }
  if (state.global_step > r.total_steps) {
    throw TrainerError(kExitUsage, "fork: the parent checkpoint " + *loaded_from + " is at step " +
                                       std::to_string(state.global_step) + ", past this run's " +
                                       std::to_string(r.total_steps) + " steps (the epochs it trains)");
  }
}

}  // namespace

bool RestoreOrStartFresh(const ResumeRequest& r, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                         SparsityMethod& sparsity, TrainState& state, std::ostream& log) {
  state.seed = r.seed;
  state.precision = r.precision;
  std::string loaded_from;
  const bool resumed =
      r.resume && LoadIfPresent(r, r.out_dir, model, optimizer, sparsity, state, &loaded_from);
  const bool forked = !resumed && !r.init_from.empty();
  if (forked) LoadForkStart(r, model, optimizer, sparsity, state, &loaded_from);
  state.world_size = r.world_size;
  state.architecture = r.architecture;  // Recorded by this run's checkpoints, also over an older one's.
  if (!resumed && !forked) {
    if (r.resume) log << r.log_prefix << "no checkpoint in " << r.out_dir << ": starting fresh\n";
    torch::manual_seed(r.seed + r.rank);
    return false;
  }
  const std::string& dir = resumed ? r.out_dir : r.init_from;
  CheckSameRun(r, dir, state);
  log << r.log_prefix << (resumed ? "resuming from " : "forking from ") << loaded_from << " at epoch "
      << state.epoch << ", step " << state.global_step << "\n";
  RestoreRankGenerator(r, state);
  return true;
}

}  // namespace nmsparse
