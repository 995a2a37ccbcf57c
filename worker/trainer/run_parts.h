// The parts of a training run built from its spec: the model's architecture, the data, the sparsity method,
// the accelerated 2:4 layers, the loader threads and the output directory. A spec mistake becomes a
// TrainerError with the usage exit code (a bad spec is permanent), a data problem the data exit code.
#ifndef NMSPARSE_WORKER_TRAINER_RUN_PARTS_H_
#define NMSPARSE_WORKER_TRAINER_RUN_PARTS_H_

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

#include "schemas/experiment_config.h"
#include "schemas/model_catalog.h"
#include "worker/sparsity/semi_structured/semi_structured_layers_setup.h"
#include "worker/sparsity/sparsity_method.h"
#include "worker/trainer/data/run_data.h"
#include "worker/trainer/trainer.h"

namespace nmsparse {

ModelArch ResolveArch(const ExperimentConfig& c);

RunData LoadData(const ExperimentConfig& c, const ModelArch& arch);

// `optimizer` may be null (validate-only). `epochs`: the run's, cooldown included (TrainedEpochs): the
// sparsity schedule spans the whole run, as the reference's does (docs/sparsity-method.md). `loss_scale`:
// the fp16 loss scaler's scale (undefined without one), which SR-STE's term follows in its exact mode.
std::unique_ptr<SparsityMethod> MakeSparsity(const ExperimentConfig& c, int64_t epochs,
                                             int64_t steps_per_epoch, torch::nn::Module& model,
                                             torch::optim::Optimizer* optimizer,
                                             const torch::Tensor& loss_scale = torch::Tensor(),
                                             std::shared_ptr<StepSwitch> step_switch = nullptr);

// Accelerated 2:4 linears (docs/accelerated-2-4.md): null when the spec's semi_structured section chooses
// none.
std::unique_ptr<SemiStructuredLayers> MakeSemiStructured(const ExperimentConfig& c, int64_t epochs,
                                                         int64_t steps_per_epoch, torch::nn::Module& model,
                                                         torch::Device device);

// Loader threads: as asked (--loader-threads), else data.workers when set, else on a GPU
// resources.cpu_threads (at least 2), so that the host keeps ahead of the device; on the CPU none, since
// every core already computes (batches are then built in the loop).
int LoaderThreads(const TrainerOptions& options, const ExperimentConfig& config, torch::Device device);

// Creates `path` and its parents (--out).
void MakeDirs(const std::string& path);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_RUN_PARTS_H_
