// The GPU's 2:4 semi-structured GEMMs, with autograd, as the semi-structured linears call them. CUDA builds
// implement them with cuSPARSELt (cusparselt_gemm.cc: plans made once per shape, nothing set up per step);
// elsewhere MakeSemiStructuredGemm says why there are none and the linears run masked dense.
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_SEMI_STRUCTURED_GEMM_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_SEMI_STRUCTURED_GEMM_H_

#include <torch/types.h>

#include <memory>
#include <string>

#include "schemas/semi_structured_config.h"
#include "worker/sparsity/semi_structured/cusparselt_shape.h"
#include "worker/sparsity/semi_structured/gemm_decision_cache.h"

namespace nmsparse {

class SemiStructuredGemm {
 public:
  virtual ~SemiStructuredGemm() = default;

  // torch::linear(input, w_tilde, bias) where W~ [n, k] is exactly 2:4 along k, its forward on the 2:4
  // kernel. Gradients: dX = dY @ W~ (on the 2:4 kernel with W~^T when `transposable`, W~ then 2:4 along n
  // too; else a dense GEMM), dW~ = dY^T @ X and db = sum dY as dense GEMMs: exactly the masked dense
  // linear's.
  virtual torch::Tensor WeightSparseLinear(const torch::Tensor& input, const torch::Tensor& w_tilde,
                                           const torch::Tensor& bias, bool transposable) = 0;

  // torch::linear(input_24, weight, bias) where input_24 [..., k] is exactly 2:4 along k (the activation
  // pruned), its forward on the 2:4 kernel; gradients as dense GEMMs.
  virtual torch::Tensor ActivationSparseLinear(const torch::Tensor& input_24, const torch::Tensor& weight,
                                               const torch::Tensor& bias) = 0;

  // Set-up, before step 1 (SemiStructuredLayers::Prepare): makes the plans of this GEMM and decides whether
  // it runs on the 2:4 kernel; under accelerate auto by timing what a step does both ways (cached per GPU
  // model in the decision file). gemm.dtype is the input's: the GEMM runs in CUDA autocast's dtype when
  // autocast is on (as in the forward pass that follows). Synchronises the device.
  virtual GemmDecision Prepare(const LinearGemm& gemm) = 0;

  // The decision Prepare made for this GEMM. Never sets anything up: a GEMM not prepared runs masked dense
  // and says so, so that no step builds a plan, searches or times.
  virtual GemmDecision Decide(const LinearGemm& gemm) const = 0;
};

struct SemiStructuredGemmOrWhy {
  std::shared_ptr<SemiStructuredGemm> gemm;  // nullptr when unavailable.
  std::string unavailable;                   // Why not: "device cpu", "built without CUDA", ...
};

// The 2:4 GEMMs on `device`, or why there are none there (accelerate: off makes none: no handle, no plan).
SemiStructuredGemmOrWhy MakeSemiStructuredGemm(const torch::Device& device,
                                               const SemiStructuredConfig& config);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_SEMI_STRUCTURED_GEMM_H_
