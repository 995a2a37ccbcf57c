// timm's SwinTransformerV2 (swin_transformer_v2.py, current layout) with its parameter names:
// patch_embed.{proj, norm}, layers.i.downsample.{reduction, norm} (stages i > 0 start with the patch
// merging), layers.i.blocks.j.{attn.{logit_scale, q_bias, v_bias, cpb_mlp.{0,2}, qkv, proj}, norm1, mlp.{fc1,
// fc2}, norm2}, norm, head.fc. Scaled cosine attention, continuous relative position bias, res-post-norm.
#ifndef NMSPARSE_WORKER_TRAINER_MODELS_SWIN_TRANSFORMER_V2_H_
#define NMSPARSE_WORKER_TRAINER_MODELS_SWIN_TRANSFORMER_V2_H_

#include <torch/arg.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <array>
#include <ostream>
#include <vector>

#include "schemas/model_catalog.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/trainer/models/classifier.h"
#include "worker/trainer/models/layers.h"
#include "worker/trainer/models/vision_transformer.h"

namespace nmsparse {

using Size2 = std::array<int64_t, 2>;

// WindowAttentionImpl's arguments, named and defaulted as timm's WindowAttention names them.
struct WindowAttentionOptions {
  WindowAttentionOptions(int64_t dim, Size2 window_size, int64_t num_heads)
      : dim_(dim), window_size_(window_size), num_heads_(num_heads) {}
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(Size2, window_size);
  TORCH_ARG(int64_t, num_heads);
  TORCH_ARG(bool, qkv_bias) = true;
  TORCH_ARG(double, attn_drop) = 0.0;
  TORCH_ARG(double, proj_drop) = 0.0;
  // The window of pre-training, which scales the relative coordinates in place of window_size; 0: none.
  TORCH_ARG(Size2, pretrained_window_size) = {0, 0};
};

// Window attention: cosine similarity scaled by exp(min(logit_scale, log 100)), plus 16*sigmoid of a bias
// that cpb_mlp computes from log-spaced relative coordinates.
class WindowAttentionImpl : public torch::nn::Cloneable<WindowAttentionImpl> {
 public:
  explicit WindowAttentionImpl(const WindowAttentionOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  // x: [num_windows*B, N, C]; mask: [num_windows, N, N] or undefined.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask);

  WindowAttentionOptions options;
  torch::Tensor logit_scale;  // [heads, 1, 1]
  torch::nn::Sequential cpb_mlp{nullptr};
  SparseLinear qkv{nullptr};  // no bias of its own: q_bias, (zero) k_bias and v_bias are added
  torch::Tensor q_bias, k_bias, v_bias;
  SparseLinear proj{nullptr};
  torch::Tensor relative_coords_table;    // buffer [1, 2Wh-1, 2Ww-1, 2]
  torch::Tensor relative_position_index;  // buffer [Wh*Ww, Wh*Ww]

 private:
  torch::nn::Dropout attn_drop_{nullptr};
  torch::nn::Dropout proj_drop_{nullptr};
};
TORCH_MODULE(WindowAttention);

// SwinV2BlockImpl's arguments, named and defaulted as timm's SwinTransformerV2Block names them; `drop` gives
// the attention's and the MLP's dropout, `drop_path` is this block's stochastic depth.
struct SwinV2BlockOptions {
  SwinV2BlockOptions(int64_t dim, Size2 input_resolution, int64_t num_heads)
      : dim_(dim), input_resolution_(input_resolution), num_heads_(num_heads) {}
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(Size2, input_resolution);
  TORCH_ARG(int64_t, num_heads);
  TORCH_ARG(int64_t, window_size) = 7;
  TORCH_ARG(int64_t, shift_size) = 0;
  TORCH_ARG(double, mlp_ratio) = 4.0;
  TORCH_ARG(bool, qkv_bias) = true;
  TORCH_ARG(DropOptions, drop);
  TORCH_ARG(double, drop_path) = 0.0;
  TORCH_ARG(int64_t, pretrained_window_size) = 0;  // 0: none.
};

// (Shifted) window block with res-post-norm: x + drop_path(norm1(attn(x))), x + drop_path(norm2(mlp(x))).
class SwinV2BlockImpl : public torch::nn::Cloneable<SwinV2BlockImpl> {
 public:
  explicit SwinV2BlockImpl(const SwinV2BlockOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& x);  // [B, H, W, C]

  SwinV2BlockOptions options;
  WindowAttention attn{nullptr};
  torch::nn::LayerNorm norm1{nullptr};
  Mlp mlp{nullptr};
  torch::nn::LayerNorm norm2{nullptr};
  torch::Tensor attn_mask;  // buffer [num_windows, N, N] when shifted

  Size2 window_size() const { return window_size_; }
  Size2 shift_size() const { return shift_size_; }

 private:
  torch::Tensor WindowedAttention(const torch::Tensor& x);
  Size2 window_size_;  // options' window and shift after timm's _calc_window_shift.
  Size2 shift_size_;
};
TORCH_MODULE(SwinV2Block);

// PatchMergingImpl's arguments, as timm's PatchMerging names them (out_dim: timm's default 2 x dim).
struct PatchMergingOptions {
  explicit PatchMergingOptions(int64_t dim) : dim_(dim), out_dim_(2 * dim) {}
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(int64_t, out_dim);
};

// 2x2 patch merging: [B, H, W, C] -> [B, H/2, W/2, out_dim], reduction (no bias) then norm.
class PatchMergingImpl : public torch::nn::Cloneable<PatchMergingImpl> {
 public:
  explicit PatchMergingImpl(const PatchMergingOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& x);

  PatchMergingOptions options;
  torch::nn::Linear reduction{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(PatchMerging);

// SwinV2StageImpl's arguments, as timm's SwinTransformerV2Stage names them; `drop_path` holds one rate per
// block.
struct SwinV2StageOptions {
  SwinV2StageOptions(int64_t dim, int64_t out_dim, Size2 input_resolution, int64_t depth, int64_t num_heads,
                     int64_t window_size)
      : dim_(dim),
        out_dim_(out_dim),
        input_resolution_(input_resolution),
        depth_(depth),
        num_heads_(num_heads),
        window_size_(window_size) {}
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(int64_t, out_dim);
  TORCH_ARG(Size2, input_resolution);
  TORCH_ARG(int64_t, depth);
  TORCH_ARG(int64_t, num_heads);
  TORCH_ARG(int64_t, window_size);
  TORCH_ARG(bool, downsample) = false;  // Starts with a patch merging (every stage but the first).
  TORCH_ARG(double, mlp_ratio) = 4.0;
  TORCH_ARG(bool, qkv_bias) = true;
  TORCH_ARG(DropOptions, drop);
  TORCH_ARG(std::vector<double>, drop_path);
  TORCH_ARG(int64_t, pretrained_window_size) = 0;  // 0: none.
};

class SwinV2StageImpl : public torch::nn::Cloneable<SwinV2StageImpl> {
 public:
  explicit SwinV2StageImpl(const SwinV2StageOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& x);

  SwinV2StageOptions options;
  PatchMerging downsample{nullptr};  // null for the first stage (timm: nn.Identity)
  torch::nn::ModuleList blocks{nullptr};
};
TORCH_MODULE(SwinV2Stage);

// ClassifierHeadImpl's arguments, as timm's ClassifierHead names them.
struct ClassifierHeadOptions {
  ClassifierHeadOptions(int64_t in_features, int64_t num_classes)
      : in_features_(in_features), num_classes_(num_classes) {}
  TORCH_ARG(int64_t, in_features);
  TORCH_ARG(int64_t, num_classes);
  TORCH_ARG(double, drop_rate) = 0.0;
};

// timm's ClassifierHead with avg pooling over NHWC features: pool, dropout, `fc`.
class ClassifierHeadImpl : public torch::nn::Cloneable<ClassifierHeadImpl> {
 public:
  explicit ClassifierHeadImpl(const ClassifierHeadOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& x);

  ClassifierHeadOptions options;
  torch::nn::Linear fc{nullptr};

 private:
  torch::nn::Dropout drop_{nullptr};
};
TORCH_MODULE(ClassifierHead);

// SwinTransformerV2Impl's arguments, named and defaulted as timm's SwinTransformerV2 names them;
// `pretrained_window_sizes` is one per stage (0 or empty: none).
struct SwinTransformerV2Options {
  TORCH_ARG(int64_t, img_size) = 224;
  TORCH_ARG(int64_t, patch_size) = 4;
  TORCH_ARG(int64_t, in_chans) = 3;
  TORCH_ARG(int64_t, num_classes) = 1000;
  TORCH_ARG(int64_t, embed_dim) = 96;
  TORCH_ARG(std::vector<int64_t>, depths) = std::vector<int64_t>{2, 2, 6, 2};
  TORCH_ARG(std::vector<int64_t>, num_heads) = std::vector<int64_t>{3, 6, 12, 24};
  TORCH_ARG(int64_t, window_size) = 7;
  TORCH_ARG(std::vector<int64_t>, pretrained_window_sizes);
  TORCH_ARG(double, mlp_ratio) = 4.0;
  TORCH_ARG(bool, qkv_bias) = true;
  TORCH_ARG(DropOptions, drop);
};

// The options of a catalogued SwinV2 architecture with the run's dropout rates.
SwinTransformerV2Options SwinTransformerV2OptionsOf(const ModelArch& arch, const DropOptions& drop);

class SwinTransformerV2Impl : public ClassifierImpl {
 public:
  explicit SwinTransformerV2Impl(const SwinTransformerV2Options& options);
  SwinTransformerV2Impl(const ModelArch& arch, const DropOptions& drop)
      : SwinTransformerV2Impl(SwinTransformerV2OptionsOf(arch, drop)) {}
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& images) override;
  LayerGroupMatcher group_matcher() const override;

  SwinTransformerV2Options options;
  PatchEmbed patch_embed{nullptr};
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  ClassifierHead head{nullptr};
};
TORCH_MODULE(SwinTransformerV2);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_MODELS_SWIN_TRANSFORMER_V2_H_
