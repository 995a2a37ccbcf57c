// Checkpoints of a run: model parameters and buffers, optimizer state, the position in the schedule and the
// torch RNG state (every rank's, in multi-rank runs), in one file `<out>/checkpoint.pt`, written to a
// temporary file and renamed so that a crash never leaves a half-written checkpoint. The checkpoint it
// replaces is kept as `<out>/checkpoint.prev.pt`, the fallback when the latest cannot be read (a damaged
// disk or a file truncated behind the trainer's back). Data order and
// augmentation are pure functions of (seed, epoch, step) and the sparsity engine derives its state from
// (epoch, step), so the position restores them too.
#ifndef NMSPARSE_WORKER_TRAINER_CHECKPOINT_CHECKPOINT_H_
#define NMSPARSE_WORKER_TRAINER_CHECKPOINT_CHECKPOINT_H_

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "worker/sparsity/sparsity_method.h"  // NamedTensors

namespace nmsparse {

// Where training stands: the next step to take, and what the metrics need to continue.
struct TrainState {
  int epoch = 0;              // Epoch of the next optimizer step.
  int64_t step_in_epoch = 0;  // Next optimizer step within that epoch.
  int64_t global_step = 0;    // Optimizer steps taken so far.
  uint64_t seed = 0;          // The run's seed (a resumed run must use the same one).
  int world_size = 1;         // Ranks of the run that wrote it (informational).
  // resources.precision of the run ("fp32" for checkpoints written before it was recorded). Weights and
  // optimizer state are fp32 either way; the trainer refuses to resume under another precision.
  std::string precision = "fp32";
  // The model's ArchitectureText (worker/trainer/checkpoint/checkpoint_architecture.h); empty in checkpoints
  // written before it was recorded. Resume refuses another architecture.
  std::string architecture;
  double best_top1 = 0.0;
  double train_seconds = 0.0;   // Cumulative, excluding evaluation.
  double flops = 0.0;           // Training FLOPs so far.
  double epoch_loss_sum = 0.0;  // Partial sums of the current epoch (mid-epoch checkpoints).
  double epoch_samples = 0.0;
  double epoch_seconds = 0.0;
  // Results of the last finished epoch, so that a run resumed after its last epoch repeats its final line
  // exactly (re-evaluating there would need the sparsity rules of the last step).
  double last_epoch_loss = 0.0;
  double last_top1 = 0.0;
  double last_top5 = 0.0;
  double last_eval_loss = 0.0;
  // model.ema: the EMA's evaluation of the last finished epoch, and the EMA itself by parameter name
  // (ModelEma::StateDict; empty without EMA and in checkpoints written without it).
  double last_ema_top1 = 0.0;
  double last_ema_top5 = 0.0;
  double last_ema_eval_loss = 0.0;
  NamedTensors ema;
  // Every rank's CPU generator state ([world_size, n] uint8) in multi-rank runs, so that each rank resumes
  // the dropout and drop-path draws it would have made; undefined for one rank (the file's torch_rng is rank
  // 0's).
  torch::Tensor rank_rngs;
  // fp16 runs: the loss scaler's state (LossScaler::State: scale, growth tracker, skipped steps) for an exact
  // resume; undefined otherwise.
  torch::Tensor loss_scaler;
  // The learning-rate scheduler's state beyond the position (LrScheduler::State: plateau's best top-1, bad
  // epochs, cooldown counter and current rate); empty for the other schedules and in older checkpoints.
  std::vector<double> lr_scheduler;
};

// The default CPU generator's state (a uint8 tensor), and setting it back.
torch::Tensor CpuRngState();
void SetCpuRngState(const torch::Tensor& state);

std::string CheckpointPath(const std::string& out_dir);
std::string PreviousCheckpointPath(const std::string& out_dir);

// Writes atomically, recording the file's SHA-256 (checkpoint_digest.h). A file that cannot be written
// (disk full, read-only) throws TrainerError(kExitStorage) naming the path and the OS error, and leaves no
// temporary file; anything else throws std::runtime_error. `sparsity_masks`: SparsityMethod::StateDict
// (dynamic sparsity masks by parameter name).
void SaveCheckpoint(const std::string& out_dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                    const TrainState& state, const NamedTensors& sparsity_masks = {});

// False when `out_dir` holds no checkpoint. Loads the latest checkpoint, or when that is damaged (its digest
// not recorded), cannot be read or does not match the model, the previous one, saying on stderr why (one
// line per file) and which file it fell back to; throws std::runtime_error naming both files and their
// errors when neither loads. Tensors (masks included) are mapped onto `device` (the model's).
// `sparsity_masks` (when given) gets the checkpoint's dynamic sparsity masks (none in older checkpoints);
// `loaded_from` (when given) the path of the file used.
bool LoadCheckpoint(const std::string& out_dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                    TrainState* state, torch::Device device = torch::kCPU,
                    NamedTensors* sparsity_masks = nullptr, std::string* loaded_from = nullptr);

// Throws std::runtime_error naming `path` when its SHA-256 is not recorded in its directory; a directory
// without a record (checkpoints written before it was kept) is used unverified, saying so on stderr.
void CheckIntact(const std::string& path);

// Model parameters and buffers only (for comparing runs and evaluation tools); checked as CheckIntact.
void LoadModelFromCheckpoint(const std::string& path, torch::nn::Module& model);

// The model EMA's tensors by parameter name (empty when the run kept none); checked as CheckIntact.
NamedTensors LoadModelEmaFromCheckpoint(const std::string& path);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_CHECKPOINT_CHECKPOINT_H_
