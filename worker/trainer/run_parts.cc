#include "worker/trainer/run_parts.h"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "schemas/model_resolution.h"
#include "schemas/trained_epochs.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {

ModelArch ResolveArch(const ExperimentConfig& c) {
  auto arch = ResolveModel(c.model);
  if (!arch.ok()) throw TrainerError(kExitUsage, "model.name: " + std::string(arch.status().message()));
  return *arch;
}

// InvalidArgument (a spec mistake) is a usage error; anything else means the data is not usable.
RunData LoadData(const ExperimentConfig& c, const ModelArch& arch) {
  auto data = LoadRunData(c, arch);
  if (!data.ok()) {
    const bool spec = data.status().code() == absl::StatusCode::kInvalidArgument;
    throw TrainerError(spec ? kExitUsage : kExitData, std::string(data.status().message()));
  }
  return std::move(*data);
}

std::unique_ptr<SparsityMethod> MakeSparsity(const ExperimentConfig& c, int64_t epochs,
                                             int64_t steps_per_epoch, torch::nn::Module& model,
                                             torch::optim::Optimizer* optimizer,
                                             const torch::Tensor& loss_scale,
                                             std::shared_ptr<StepSwitch> step_switch) {
  const bool exact = c.sparsity.srste_decay_under_loss_scale == SrsteLossScale::kExact;
  auto method = CreateSparsityMethod(c.sparsity, model,
                                     SparsityMethodOptions(epochs, steps_per_epoch)
                                         .span_epochs(SparsityEpochs(c.schedule))
                                         .optimizer(optimizer)
                                         .seed(c.seed)
                                         .srste_term_scale(exact ? loss_scale : torch::Tensor())
                                         .step_switch(std::move(step_switch)));
  if (!method.ok()) throw TrainerError(kExitUsage, std::string(method.status().message()));
  return std::move(*method);
}

std::unique_ptr<SemiStructuredLayers> MakeSemiStructured(const ExperimentConfig& c, int64_t epochs,
                                                         int64_t steps_per_epoch, torch::nn::Module& model,
                                                         torch::Device device) {
  auto semi = SemiStructuredLayers::Install(c.semi_structured, c.sparsity, epochs, steps_per_epoch, model,
                                            device, SparsityEpochs(c.schedule));
  if (!semi.ok()) throw TrainerError(kExitUsage, std::string(semi.status().message()));
  return std::move(*semi);
}

int LoaderThreads(const TrainerOptions& options, const ExperimentConfig& config, torch::Device device) {
  if (options.loader_threads >= 0) return options.loader_threads;
  if (config.data.workers > 0) return config.data.workers;
  return device.is_cuda() ? std::max(2, config.resources.cpu_threads) : 0;
}

void MakeDirs(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos == path.size() || path[pos] == '/') mkdir(path.substr(0, pos).c_str(), 0755);
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw TrainerError(kExitUsage, "--out: cannot create directory " + path);
  }
}

}  // namespace nmsparse
