// timm's VisionTransformer (vision_transformer.py) with its parameter names: patch_embed.proj, cls_token,
// pos_embed, blocks.i.{norm1, attn.qkv, attn.proj, norm2, mlp.fc1, mlp.fc2}, norm, head. The patch
// projection, the fused qkv, attn.proj and the MLP linears are sparse layers the engine can mask.
#ifndef NMSPARSE_WORKER_TRAINER_MODELS_VISION_TRANSFORMER_H_
#define NMSPARSE_WORKER_TRAINER_MODELS_VISION_TRANSFORMER_H_

#include <torch/arg.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "schemas/model_catalog.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/trainer/models/classifier.h"
#include "worker/trainer/models/layers.h"

namespace nmsparse {

// timm's PatchEmbed: a conv with kernel = stride = patch, [B, C, H, W] -> [B, H/p, W/p, D] (NHWC), then an
// optional LayerNorm `norm` (SwinV2 has one, ViT does not).
class PatchEmbedImpl : public torch::nn::Module {
 public:
  PatchEmbedImpl(int64_t in_chans, int64_t embed_dim, int64_t patch_size, bool with_norm = false);
  torch::Tensor forward(const torch::Tensor& x);

  SparseConv2d proj{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(PatchEmbed);

// AttentionImpl's arguments, named and defaulted as timm's Attention names them.
struct AttentionOptions {
  AttentionOptions(int64_t dim, int64_t num_heads) : dim_(dim), num_heads_(num_heads) {}
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(int64_t, num_heads);
  TORCH_ARG(bool, qkv_bias) = false;
  TORCH_ARG(double, attn_drop) = 0.0;
  TORCH_ARG(double, proj_drop) = 0.0;
};

// Multi-head self-attention with a fused qkv projection.
class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const AttentionOptions& options);
  torch::Tensor forward(const torch::Tensor& x);

  SparseLinear qkv{nullptr};
  SparseLinear proj{nullptr};

 private:
  int64_t num_heads_;
  double scale_;
  torch::nn::Dropout attn_drop_{nullptr};
  torch::nn::Dropout proj_drop_{nullptr};
};
TORCH_MODULE(Attention);

// VitBlockImpl's arguments, named and defaulted as timm's Block names them; `drop` gives the attention's and
// the MLP's dropout, `drop_path` is this block's stochastic depth.
struct VitBlockOptions {
  VitBlockOptions(int64_t dim, int64_t num_heads) : dim_(dim), num_heads_(num_heads) {}
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(int64_t, num_heads);
  TORCH_ARG(double, mlp_ratio) = 4.0;
  TORCH_ARG(bool, qkv_bias) = false;
  TORCH_ARG(DropOptions, drop);
  TORCH_ARG(double, drop_path) = 0.0;
};

// Pre-norm transformer block: x + drop_path(attn(norm1(x))), then x + drop_path(mlp(norm2(x))).
class VitBlockImpl : public torch::nn::Module {
 public:
  explicit VitBlockImpl(const VitBlockOptions& options);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::LayerNorm norm1{nullptr};
  Attention attn{nullptr};
  torch::nn::LayerNorm norm2{nullptr};
  Mlp mlp{nullptr};

 private:
  double drop_path_;
};
TORCH_MODULE(VitBlock);

class VisionTransformerImpl : public ClassifierImpl {
 public:
  VisionTransformerImpl(const ModelArch& arch, const DropOptions& drop);
  torch::Tensor forward(const torch::Tensor& images) override;
  LayerGroupMatcher group_matcher() const override;

  PatchEmbed patch_embed{nullptr};
  torch::Tensor cls_token;  // [1, 1, D], undefined without a class token
  torch::Tensor pos_embed;  // [1, tokens, D]
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear head{nullptr};

 private:
  bool class_token_;
  torch::nn::Dropout pos_drop_{nullptr};
  torch::nn::Dropout head_drop_{nullptr};
};
TORCH_MODULE(VisionTransformer);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_MODELS_VISION_TRANSFORMER_H_
