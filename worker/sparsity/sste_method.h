// S-STE (Hu, Zhu, Chen, NeurIPS 2024; docs/sparsity-method.md §12) as a sparsity method: every sparse linear
// forwards beta * S(W), S the 2:4 soft threshold and beta frozen at construction (a checkpointed state, never
// trained), with the gradient straight through to W and the weight gradient by MVUE 2:4 along tokens, drawn
// afresh at every step from (seed, step). The N:M engine (as STE 2:4) finds the layers, keeps the phases and
// writes the reports; this method replaces the layers' forward.
#ifndef NMSPARSE_WORKER_SPARSITY_SSTE_METHOD_H_
#define NMSPARSE_WORKER_SPARSITY_SSTE_METHOD_H_

#include <memory>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"
#include "worker/sparsity/sparsity_method.h"

namespace nmsparse {

// `config.sparsity_type` must be SSTE (validated as 2:4 on linears). beta is computed here, from the
// model's weights as they are now: create the method after the initial weights and before training.
absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateSsteMethod(const SparsityConfig& config,
                                                                 torch::nn::Module& model,
                                                                 const SparsityMethodOptions& options);

// The seed of the MVUE draws of optimizer step `step` in a run seeded `seed` (the same on a resume).
uint64_t MvueStepSeed(uint64_t seed, int64_t step);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SSTE_METHOD_H_
