// timm's VisionTransformer (vision_transformer.py) with its parameter names: patch_embed.proj, cls_token,
// pos_embed, blocks.i.{norm1, attn.qkv, attn.proj, norm2, mlp.fc1, mlp.fc2}, norm, head. The patch
// projection, the fused qkv, attn.proj and the MLP linears are sparse layers the engine can mask.
#ifndef NMSPARSE_WORKER_TRAINER_MODELS_VISION_TRANSFORMER_H_
#define NMSPARSE_WORKER_TRAINER_MODELS_VISION_TRANSFORMER_H_

#include <torch/arg.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <ostream>

#include "schemas/model_catalog.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/trainer/models/classifier.h"
#include "worker/trainer/models/layers.h"

namespace nmsparse {

// PatchEmbedImpl's arguments, named as timm's PatchEmbed names them; `norm`: timm's norm_layer given.
struct PatchEmbedOptions {
  PatchEmbedOptions(int64_t patch_size, int64_t in_chans, int64_t embed_dim)
      : patch_size_(patch_size), in_chans_(in_chans), embed_dim_(embed_dim) {}
  TORCH_ARG(int64_t, patch_size);
  TORCH_ARG(int64_t, in_chans);
  TORCH_ARG(int64_t, embed_dim);
  TORCH_ARG(bool, norm) = false;
};

// timm's PatchEmbed: a conv with kernel = stride = patch, [B, C, H, W] -> [B, H/p, W/p, D] (NHWC), then an
// optional LayerNorm `norm` (SwinV2 has one, ViT does not).
class PatchEmbedImpl : public torch::nn::Cloneable<PatchEmbedImpl> {
 public:
  explicit PatchEmbedImpl(const PatchEmbedOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& x);

  PatchEmbedOptions options;
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
class AttentionImpl : public torch::nn::Cloneable<AttentionImpl> {
 public:
  explicit AttentionImpl(const AttentionOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& x);

  AttentionOptions options;
  SparseLinear qkv{nullptr};
  SparseLinear proj{nullptr};

 private:
  double scale_ = 1.0;
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
class VitBlockImpl : public torch::nn::Cloneable<VitBlockImpl> {
 public:
  explicit VitBlockImpl(const VitBlockOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& x);

  VitBlockOptions options;
  torch::nn::LayerNorm norm1{nullptr};
  Attention attn{nullptr};
  torch::nn::LayerNorm norm2{nullptr};
  Mlp mlp{nullptr};
};
TORCH_MODULE(VitBlock);

// VisionTransformerImpl's arguments, named and defaulted as timm's VisionTransformer names them (ViT-B/16);
// `class_token` false pools by average (timm's global_pool "avg", with fc_norm).
struct VisionTransformerOptions {
  TORCH_ARG(int64_t, img_size) = 224;
  TORCH_ARG(int64_t, patch_size) = 16;
  TORCH_ARG(int64_t, in_chans) = 3;
  TORCH_ARG(int64_t, num_classes) = 1000;
  TORCH_ARG(int64_t, embed_dim) = 768;
  TORCH_ARG(int64_t, depth) = 12;
  TORCH_ARG(int64_t, num_heads) = 12;
  TORCH_ARG(double, mlp_ratio) = 4.0;
  TORCH_ARG(bool, qkv_bias) = true;
  TORCH_ARG(bool, class_token) = true;
  TORCH_ARG(DropOptions, drop);
};

// The options of a catalogued ViT architecture with the run's dropout rates.
VisionTransformerOptions VisionTransformerOptionsOf(const ModelArch& arch, const DropOptions& drop);

class VisionTransformerImpl : public ClassifierImpl {
 public:
  explicit VisionTransformerImpl(const VisionTransformerOptions& options);
  VisionTransformerImpl(const ModelArch& arch, const DropOptions& drop)
      : VisionTransformerImpl(VisionTransformerOptionsOf(arch, drop)) {}
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& images) override;
  LayerGroupMatcher group_matcher() const override;

  VisionTransformerOptions options;
  PatchEmbed patch_embed{nullptr};
  torch::Tensor cls_token;  // [1, 1, D], undefined without a class token
  torch::Tensor pos_embed;  // [1, tokens, D]
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear head{nullptr};

 private:
  torch::nn::Dropout pos_drop_{nullptr};
  torch::nn::Dropout head_drop_{nullptr};
};
TORCH_MODULE(VisionTransformer);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_MODELS_VISION_TRANSFORMER_H_
