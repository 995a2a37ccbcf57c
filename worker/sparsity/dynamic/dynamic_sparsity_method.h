// Dynamic unstructured sparsity (docs/sparsity-method.md §7) as a SparsityMethod: the controller masks
// gradients after the backward pass and weights (and optimizer state) after the optimizer step, and its
// masks are the state a resumed run needs.
#ifndef NMSPARSE_WORKER_SPARSITY_DYNAMIC_DYNAMIC_SPARSITY_METHOD_H_
#define NMSPARSE_WORKER_SPARSITY_DYNAMIC_DYNAMIC_SPARSITY_METHOD_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"
#include "worker/sparsity/sparsity_method.h"

namespace nmsparse {

// InvalidArgument naming the key, as DynamicSparsityController::Create reports it. `optimizer` may be null.
absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateDynamicSparsityMethod(
    const std::vector<DynamicSparsityGroup>& groups, torch::nn::Module& model,
    torch::optim::Optimizer* optimizer, uint64_t seed, int64_t total_steps = 0);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_DYNAMIC_DYNAMIC_SPARSITY_METHOD_H_
