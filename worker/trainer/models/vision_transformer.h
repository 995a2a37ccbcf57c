// timm's VisionTransformer (vision_transformer.py) with its parameter names: patch_embed.proj, cls_token,
// pos_embed, blocks.i.{norm1, attn.qkv, attn.proj, norm2, mlp.fc1, mlp.fc2}, norm, head. The patch
// projection, the fused qkv, attn.proj and the MLP linears are sparse layers the engine can mask.
#ifndef NMSPARSE_WORKER_TRAINER_MODELS_VISION_TRANSFORMER_H_
#define NMSPARSE_WORKER_TRAINER_MODELS_VISION_TRANSFORMER_H_

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

// Multi-head self-attention with a fused qkv projection.
class AttentionImpl : public torch::nn::Module {
 public:
  AttentionImpl(int64_t dim, int64_t num_heads, bool qkv_bias, double attn_drop, double proj_drop);
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

// Pre-norm transformer block: x + drop_path(attn(norm1(x))), then x + drop_path(mlp(norm2(x))).
class VitBlockImpl : public torch::nn::Module {
 public:
  VitBlockImpl(int64_t dim, int64_t num_heads, double mlp_ratio, bool qkv_bias, const DropOptions& drop,
               double drop_path);
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
