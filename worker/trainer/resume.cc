#include "worker/trainer/resume.h"

#include <torch/torch.h>

#include <stdexcept>

#include "worker/trainer/exit_codes.h"

namespace nmsparse {
namespace {

// Loads the checkpoint when there is one; its sparsity state goes to `sparsity`.
bool LoadIfPresent(const ResumeRequest& r, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                   SparsityMethod& sparsity, TrainState& state) {
  try {
    NamedTensors masks;
    if (!LoadCheckpoint(r.out_dir, model, optimizer, &state, r.device, &masks)) return false;
    if (absl::Status loaded = sparsity.LoadStateDict(masks); !loaded.ok())
      throw std::runtime_error(std::string(loaded.message()));
    return true;
  } catch (const std::exception& e) {
    throw TrainerError(kExitTraining, e.what());
  }
}

void CheckSameRun(const ResumeRequest& r, const TrainState& state) {
  if (state.seed != r.seed) {
    throw TrainerError(kExitUsage, "seed " + std::to_string(r.seed) + " differs from the checkpoint's " +
                                       std::to_string(state.seed) + " in " + r.out_dir);
  }
  // The checkpoint's fp32 weights would load under either precision, but the run would then be neither the
  // one its spec (and content hash) names nor the one that wrote it.
  if (state.precision != r.precision) {
    throw TrainerError(kExitUsage, "resources.precision " + r.precision + " differs from the checkpoint's " +
                                       state.precision + " in " + r.out_dir +
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

}  // namespace

bool RestoreOrStartFresh(const ResumeRequest& r, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                         SparsityMethod& sparsity, TrainState& state, std::ostream& log) {
  state.seed = r.seed;
  state.precision = r.precision;
  const bool resumed = r.resume && LoadIfPresent(r, model, optimizer, sparsity, state);
  state.world_size = r.world_size;
  if (!resumed) {
    if (r.resume) log << r.log_prefix << "no checkpoint in " << r.out_dir << ": starting fresh\n";
    torch::manual_seed(r.seed + r.rank);
    return false;
  }
  CheckSameRun(r, state);
  log << r.log_prefix << "resuming from " << CheckpointPath(r.out_dir) << " at epoch " << state.epoch
      << ", step " << state.global_step << "\n";
  RestoreRankGenerator(r, state);
  return true;
}

}  // namespace nmsparse
