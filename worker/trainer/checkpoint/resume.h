// Where a run starts: from the checkpoint in its output directory when asked to resume and one is there
// (docs/nmtrain.md, "Checkpoints"), else from scratch. The policy beside checkpoint.cc, which reads and
// writes the file.
#ifndef NMSPARSE_WORKER_TRAINER_CHECKPOINT_RESUME_H_
#define NMSPARSE_WORKER_TRAINER_CHECKPOINT_RESUME_H_

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <ostream>
#include <string>

#include "worker/sparsity/sparsity_method.h"
#include "worker/trainer/checkpoint/checkpoint.h"

namespace nmsparse {

struct ResumeRequest {
  std::string out_dir;
  bool resume = false;  // --resume: continue from <out_dir>/checkpoint.pt when present.
  uint64_t seed = 0;    // The spec's; a checkpoint of another seed or precision is refused.
  std::string precision;
  std::string architecture;  // ArchitectureText of the run's model; a checkpoint of another is refused.
  int rank = 0;
  int world_size = 1;
  torch::Device device = torch::kCPU;
  std::string log_prefix;  // "[rank r] " in multi-rank runs.
  // A fork (nmctl fork): the parent run's directory, whose checkpoint is the start when out_dir has none.
  std::string init_from;
  int64_t total_steps = 0;  // This run's schedule; a fork's start past it is refused.
};

// Fills `state` (seed, precision, world size; from the checkpoint when resuming), loads the model, optimizer
// and sparsity state, and seeds this rank's CPU generator: its own saved state, or a fresh seed. Returns
// whether it resumed (or started from a fork's parent checkpoint). Throws TrainerError: kExitTraining for an
// unreadable checkpoint, kExitUsage for one written under another seed, precision or architecture, for a fork
// whose parent checkpoint is missing or past total_steps (the output directory is left as it was).
bool RestoreOrStartFresh(const ResumeRequest& request, torch::nn::Module& model,
                         torch::optim::Optimizer& optimizer, SparsityMethod& sparsity, TrainState& state,
                         std::ostream& log);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_CHECKPOINT_RESUME_H_
