// The N:M recipes (docs/sparsity-method.md §1-§6) as a SparsityMethod: the SparsityEngine sets every sparse
// layer's rule at BeginStep, and the layers form W~ and its gradient in their own forward and backward, so
// the hooks after the backward pass and the optimizer step have nothing to do.
#ifndef NMSPARSE_WORKER_SPARSITY_NM_SPARSITY_METHOD_H_
#define NMSPARSE_WORKER_SPARSITY_NM_SPARSITY_METHOD_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"
#include "worker/sparsity/sparsity_method.h"

namespace nmsparse {

// InvalidArgument ("sparsity: ...") as SparsityEngine::Create reports it.
absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateNMSparsityMethod(
    const SparsityConfig& config, int total_epochs, int64_t steps_per_epoch, torch::nn::Module& model,
    int span_epochs = 0, const torch::Tensor& srste_term_scale = {});

// The engine of a 2024 recipe (S-STE, STEP, HU24): its layers and phases placed as for STE 2:4 (hard mask,
// straight through), which the recipe then wraps with its own masks or update.
absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateSteTwoFourEngine(const SparsityConfig& config,
                                                                       torch::nn::Module& model,
                                                                       const SparsityMethodOptions& options);

// 1 - N/M of an "N:M" target, the rate of "unstructured R", 0 for "dense" (target_sparsity/<location>).
double TargetSparsity(const std::string& target);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_NM_SPARSITY_METHOD_H_
