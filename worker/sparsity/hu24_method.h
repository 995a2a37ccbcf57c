// Hu et al., "Accelerating Transformer Pre-training with 2:4 Sparsity" (ICML 2024; docs/sparsity-method.md
// §12.3) as a sparsity method, with the DeiT schedule of the authors' code: every sparse linear holds a
// transposable 2:4 mask, all ones until optimizer step k (1-based), recomputed from |W| in the forward of
// steps k, 2k, 3k, ... and held in between (k = mask_refresh_steps, 10). The forward multiplies W by it, the
// gradient reaches W straight through, the weight gradient is MVUE 2:4 of dY^T along tokens (drawn from
// (seed, step)), and the masked decay srste_lambda * W * (1 - mask) joins the gradient after clipping, before
// the optimizer's update. In a dense phase (the dense fine-tune) the layers are plain linears. The N:M engine
// (as STE 2:4) places the layers and keeps the phases; this method replaces the layers' forward.
#ifndef NMSPARSE_WORKER_SPARSITY_HU24_METHOD_H_
#define NMSPARSE_WORKER_SPARSITY_HU24_METHOD_H_

#include <memory>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"
#include "worker/sparsity/sparsity_method.h"

namespace nmsparse {

// `config.sparsity_type` must be HU24 (validated as 2:4 on linears whose dimensions are multiples of 4).
absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateHu24Method(const SparsityConfig& config,
                                                                 torch::nn::Module& model,
                                                                 const SparsityMethodOptions& options);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_HU24_METHOD_H_
