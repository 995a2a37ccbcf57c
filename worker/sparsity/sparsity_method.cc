#include "worker/sparsity/sparsity_method.h"

#include "worker/sparsity/dynamic/dynamic_sparsity_method.h"
#include "worker/sparsity/nm_sparsity_method.h"

namespace nmsparse {

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateSparsityMethod(
    const SparsityConfig& config, int total_epochs, int64_t steps_per_epoch, torch::nn::Module& model,
    torch::optim::Optimizer* optimizer, uint64_t seed) {
  if (config.IsDynamic()) return CreateDynamicSparsityMethod(config.dynamic, model, optimizer, seed);
  return CreateNMSparsityMethod(config, total_epochs, steps_per_epoch, model);
}

}  // namespace nmsparse
