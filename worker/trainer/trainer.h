// One training run of nmtrain: builds the model, data, sparsity engine and optimizer from an experiment spec,
// trains with data parallelism over the ranks of the environment, evaluates every epoch, writes checkpoints
// and prints metric lines (docs/nmtrain.md).
#ifndef NMSPARSE_WORKER_TRAINER_TRAINER_H_
#define NMSPARSE_WORKER_TRAINER_TRAINER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>

#include "schemas/experiment_config.h"
#include "worker/trainer/test_hooks.h"

namespace nmsparse {

struct TrainerOptions {
  std::string out_dir;                       // Checkpoint, spec.yaml; created when missing.
  bool resume = false;                       // Continue from <out_dir>/checkpoint.pt when present.
  std::string init_from;                     // A fork: else start from <init_from>/checkpoint.pt.
  int threads = 1;                           // Intra-op threads per rank.
  std::string device = "cpu";                // "cpu", or "cuda": GPU LOCAL_RANK, NCCL between ranks.
  std::chrono::milliseconds timeout{60000};  // Rendezvous and collective timeout.
  std::ostream* metrics = &std::cout;        // Metric lines (rank 0 only).
  std::ostream* log = &std::cerr;            // Human progress.
  const std::atomic<bool>* stop = nullptr;   // Set by SIGTERM: stop at the next step boundary.
  int64_t stop_after_steps = -1;             // Behave as if stopped once this many optimizer steps are done.
  int loader_threads = -1;                   // Batch-building threads; -1: 2+ on a GPU, none on the CPU.
  TrainerTestHooks test;                     // What tests may ask beyond the spec; all off by default.
};

// Trains; returns kExitOk, or kExitTerminated when stopped. Throws TrainerError (with its exit code) on bad
// specs, data, training or distributed failures.
int RunTraining(const ExperimentConfig& config, const TrainerOptions& options);

// --validate-only: builds model and engine, prints the architecture, parameter count and the N:M of every
// sparse layer per phase to `out` without training. Returns kExitOk, or kExitData when the dataset is not
// usable (printed, the rest is still described). Throws TrainerError on a bad spec.
int DescribeRun(const ExperimentConfig& config, std::ostream& out);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_TRAINER_H_
