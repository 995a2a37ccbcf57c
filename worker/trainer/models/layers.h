// Building blocks shared by the ViT and SwinV2 models, named as timm names them: Mlp (fc1, act, fc2),
// DropPath (stochastic depth) and timm's initialisers.
#ifndef NMSPARSE_WORKER_TRAINER_MODELS_LAYERS_H_
#define NMSPARSE_WORKER_TRAINER_MODELS_LAYERS_H_

#include <torch/arg.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <ostream>

#include "worker/sparsity/sparse_linear.h"

namespace nmsparse {

// Dropout rates of a model, as timm's constructor arguments name them.
struct DropOptions {
  // Head dropout (ViT: also position / projection dropout, as timm's proj_drop_rate).
  TORCH_ARG(double, drop_rate) = 0.0;
  TORCH_ARG(double, drop_path_rate) = 0.0;  // Stochastic depth, linearly increasing over blocks.
  TORCH_ARG(double, attn_drop_rate) = 0.0;
};

// MlpImpl's arguments, named and defaulted as timm's Mlp names them (out_features = in_features).
struct MlpOptions {
  MlpOptions(int64_t in_features, int64_t hidden_features)
      : in_features_(in_features), hidden_features_(hidden_features) {}
  TORCH_ARG(int64_t, in_features);
  TORCH_ARG(int64_t, hidden_features);
  TORCH_ARG(double, drop) = 0.0;
};

// timm's Mlp: fc1 -> GELU -> dropout -> fc2 -> dropout. fc1 and fc2 are sparsifiable (location FF).
class MlpImpl : public torch::nn::Cloneable<MlpImpl> {
 public:
  explicit MlpImpl(const MlpOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& x);

  MlpOptions options;

  SparseLinear fc1{nullptr};
  SparseLinear fc2{nullptr};

 private:
  torch::nn::Dropout drop1_{nullptr};
  torch::nn::Dropout drop2_{nullptr};
};
TORCH_MODULE(Mlp);

// Stochastic depth per sample (timm's drop_path with scale_by_keep); identity at eval or rate 0.
torch::Tensor DropPath(const torch::Tensor& x, double rate, bool training);

// timm's trunc_normal_(std) with its absolute bounds [-2, 2].
void TruncNormal(torch::Tensor& t, double std);

// timm's Linear init: trunc_normal(std 0.02) weights, zero biases (SparseLinear and torch::nn::Linear alike).
void InitLinearsTimm(torch::nn::Module& root);

// Linearly spaced drop-path rates for `n` blocks, from 0 to `rate` (torch.linspace(0, rate, n)).
std::vector<double> DropPathRates(double rate, int64_t n);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_MODELS_LAYERS_H_
