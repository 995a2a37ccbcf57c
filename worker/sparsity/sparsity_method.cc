#include "worker/sparsity/sparsity_method.h"

#include "worker/sparsity/bimask_method.h"
#include "worker/sparsity/dynamic/dynamic_sparsity_method.h"
#include "worker/sparsity/hu24_method.h"
#include "worker/sparsity/nm_sparsity_method.h"
#include "worker/sparsity/sste_method.h"
#include "worker/sparsity/step_method.h"

namespace nmsparse {

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateSparsityMethod(const SparsityConfig& config,
                                                                     torch::nn::Module& model,
                                                                     const SparsityMethodOptions& options) {
  if (config.sparsity_type == SparsityType::kSste) return CreateSsteMethod(config, model, options);
  if (config.sparsity_type == SparsityType::kStep) return CreateStepMethod(config, model, options);
  if (config.sparsity_type == SparsityType::kHu24) return CreateHu24Method(config, model, options);
  if (config.sparsity_type == SparsityType::kBimask) return CreateBimaskMethod(config, model, options);
  if (config.IsDynamic()) {
    return CreateDynamicSparsityMethod(config.dynamic, model, options.optimizer(), options.seed(),
                                       options.total_epochs() * options.steps_per_epoch());
  }
  return CreateNMSparsityMethod(config, options.total_epochs(), options.steps_per_epoch(), model,
                                options.span_epochs(), options.srste_term_scale());
}

}  // namespace nmsparse
