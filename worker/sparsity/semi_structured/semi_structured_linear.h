// A linear chosen by the spec's semi_structured section: weight 2:4 (the engine's mask, or a transposable
// one) or activation 2:4 (the input pruned 2:4 along its last dimension). Runs the GPU's 2:4 kernels where
// they are available and chosen, and otherwise the masked dense path (torch::linear on the same masked
// operands), recording which path ran and why for the metric lines.
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_SEMI_STRUCTURED_LINEAR_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_SEMI_STRUCTURED_LINEAR_H_

#include <torch/types.h>

#include <memory>
#include <string>

#include "schemas/semi_structured_config.h"
#include "worker/sparsity/semi_structured/linear_accelerator.h"
#include "worker/sparsity/semi_structured/semi_structured_gemm.h"

namespace nmsparse {

// The reason a layer gives after the sparse-then-dense switch (an ordinary dense linear then).
inline constexpr char kDenseAfterReason[] = "dense_after";

// What a semi-structured linear ran at its last forward pass.
struct SemiStructuredPath {
  bool kernel = false;  // The 2:4 kernel; false: masked dense (or dense after the switch).
  double speedup = 0;   // Timed dense / 2:4 of its GEMM; 0 when not timed.
  std::string reason;   // "accelerate: force", "2:4 1.28x >= 1.05x needed", "device cpu", "dense_after", ...
};

class SemiStructuredLinear : public LinearAccelerator {
 public:
  // `backend.gemm` may be nullptr (then `backend.unavailable` says why and the masked dense path runs).
  SemiStructuredLinear(SemiStructuredKind kind, SemiStructuredMask mask, SemiStructuredGemmOrWhy backend);

  torch::Tensor Forward(const torch::Tensor& input, const torch::Tensor& weight, const LayerRule* rule,
                        const torch::Tensor& bias) override;

  // From the sparse-then-dense switch: when set, the layer is an ordinary dense linear (the rule ignored).
  void set_dense(bool dense) { dense_ = dense; }
  // Set-up (SemiStructuredLayers::Prepare): while set, a forward pass makes the plans of its GEMM's shape
  // (and decides) whatever this step's rule, and returns the plain dense linear.
  void set_preparing(bool preparing) { preparing_ = preparing; }
  SemiStructuredKind kind() const { return kind_; }
  const SemiStructuredPath& last_path() const { return path_; }

 private:
  torch::Tensor WeightForward(const torch::Tensor& input, const torch::Tensor& weight, const LayerRule* rule,
                              const torch::Tensor& bias);
  torch::Tensor ActivationForward(const torch::Tensor& input, const torch::Tensor& weight,
                                  const LayerRule* rule, const torch::Tensor& bias);
  // Whether the GEMM of this input and weight runs on the kernel (as prepared); sets path_.
  bool UseKernel(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias);

  SemiStructuredKind kind_;
  SemiStructuredMask mask_;
  SemiStructuredGemmOrWhy backend_;
  bool dense_ = false;
  bool preparing_ = false;
  SemiStructuredPath path_;
};

// W~ of a weight-2:4 layer under `rule` (which WhyNotTwoFour accepts) with a transposable mask in place of
// the engine's, keeping the rule's gradient (SR-STE's term, or straight through).
torch::Tensor TransposableEffectiveWeight(const torch::Tensor& weight, const LayerRule& rule);

// 1 where `input` keeps its value, 0 where pruned: 2 of every 4 along the last dimension, by magnitude (ties
// to the lower index), in input's dtype. The engine's one-pass N:M selection (nm_mask.h; the CUDA kernel on a
// GPU): no sort or topk over the activation, and no temporary besides its fp32 copy.
torch::Tensor ActivationTwoFourMask(const torch::Tensor& input);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_SEMI_STRUCTURED_LINEAR_H_
