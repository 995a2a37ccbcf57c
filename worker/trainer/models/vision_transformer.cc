#include "worker/trainer/models/vision_transformer.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

#include "worker/trainer/kernels/fused_attention.h"
#include "worker/trainer/kernels/sdpa_attention.h"

namespace nmsparse {
namespace {

constexpr double kVitLayerNormEps = 1e-6;  // timm: partial(nn.LayerNorm, eps=1e-6)

torch::nn::LayerNorm VitLayerNorm(int64_t dim) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(kVitLayerNormEps));
}

}  // namespace

PatchEmbedImpl::PatchEmbedImpl(const PatchEmbedOptions& options) : options(options) { reset(); }

void PatchEmbedImpl::reset() {
  const int64_t dim = options.embed_dim(), patch = options.patch_size();
  proj = register_module("proj",
                         SparseConv2d(SparseConv2dOptions(options.in_chans(), dim, patch).stride(patch)));
  if (options.norm())
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
}

void PatchEmbedImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "nmsparse::PatchEmbed(patch_size=" << options.patch_size()
         << ", in_chans=" << options.in_chans() << ", embed_dim=" << options.embed_dim()
         << ", norm=" << options.norm() << ")";
}

torch::Tensor PatchEmbedImpl::forward(const torch::Tensor& x) {  // NHWC, as timm's output_fmt='NHWC'
  auto y = proj(x).permute({0, 2, 3, 1});
  return norm ? norm(y) : y;
}

AttentionImpl::AttentionImpl(const AttentionOptions& options) : options(options) { reset(); }

void AttentionImpl::reset() {
  const int64_t dim = options.dim();
  if (dim % options.num_heads() != 0)
    throw std::invalid_argument("attention: dim must be divisible by num_heads");
  scale_ = 1.0 / std::sqrt(static_cast<double>(dim / options.num_heads()));
  qkv = register_module("qkv", SparseLinear(SparseLinearOptions(dim, 3 * dim).bias(options.qkv_bias())));
  attn_drop_ = register_module("attn_drop", torch::nn::Dropout(options.attn_drop()));
  proj = register_module("proj", SparseLinear(dim, dim));
  proj_drop_ = register_module("proj_drop", torch::nn::Dropout(options.proj_drop()));
}

void AttentionImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "nmsparse::Attention(dim=" << options.dim()
         << ", num_heads=" << options.num_heads() << ", qkv_bias=" << options.qkv_bias() << ")";
}

// On CPU in float32 the fused kernel computes the same attention without the permute copies and per-head
// ATen calls (worker/trainer/kernels/fused_attention.h); attention dropout and other devices / dtypes take
// the composite path.
torch::Tensor AttentionImpl::forward(const torch::Tensor& x) {
  const int64_t num_heads = options.num_heads();
  auto qkv_out = qkv->forward(x);
  const bool attn_dropout = is_training() && attn_drop_->options.p() > 0.0;
  torch::Tensor heads;
  if (!attn_dropout && FusedAttentionApplies(qkv_out, num_heads)) {
    heads = FusedAttention(qkv_out, num_heads, scale_);  // CPU, float32.
  } else if (SdpaAvailable()) {  // LibTorch 2.x: flash / memory-efficient / cuDNN attention on a GPU.
    heads = SdpaAttention(qkv_out, num_heads, scale_, attn_dropout ? attn_drop_->options.p() : 0.0);
  } else {
    heads = CompositeAttention(qkv_out, num_heads, scale_,
                               [this](const torch::Tensor& attn) { return attn_drop_(attn); });
  }
  return proj_drop_(proj->forward(heads));
}

VitBlockImpl::VitBlockImpl(const VitBlockOptions& options) : options(options) { reset(); }

void VitBlockImpl::reset() {
  const int64_t dim = options.dim();
  const DropOptions& drop = options.drop();
  norm1 = register_module("norm1", VitLayerNorm(dim));
  attn = register_module("attn", Attention(AttentionOptions(dim, options.num_heads())
                                               .qkv_bias(options.qkv_bias())
                                               .attn_drop(drop.attn_drop_rate())
                                               .proj_drop(drop.drop_rate())));
  norm2 = register_module("norm2", VitLayerNorm(dim));
  mlp = register_module(
      "mlp", Mlp(MlpOptions(dim, static_cast<int64_t>(dim * options.mlp_ratio())).drop(drop.drop_rate())));
}

void VitBlockImpl::pretty_print(std::ostream& stream) const {
  stream << "nmsparse::VitBlock(dim=" << options.dim() << ", num_heads=" << options.num_heads()
         << ", mlp_ratio=" << options.mlp_ratio() << ", drop_path=" << options.drop_path() << ")";
}

torch::Tensor VitBlockImpl::forward(const torch::Tensor& x) {
  auto y = x + DropPath(attn(norm1(x)), options.drop_path(), is_training());
  return y + DropPath(mlp(norm2(y)), options.drop_path(), is_training());
}

VisionTransformerOptions VisionTransformerOptionsOf(const ModelArch& arch, const DropOptions& drop) {
  return VisionTransformerOptions()
      .img_size(arch.img_size)
      .patch_size(arch.patch_size)
      .in_chans(arch.in_chans)
      .num_classes(arch.num_classes)
      .embed_dim(arch.embed_dim)
      .depth(arch.depth)
      .num_heads(arch.num_heads)
      .mlp_ratio(arch.mlp_ratio)
      .qkv_bias(arch.qkv_bias)
      .class_token(arch.class_token)
      .drop(drop);
}

VisionTransformerImpl::VisionTransformerImpl(const VisionTransformerOptions& options) : options(options) {
  if (options.img_size() % options.patch_size() != 0) {
    throw std::invalid_argument("vision transformer: img_size " + std::to_string(options.img_size()) +
                                " is not a multiple of patch_size " + std::to_string(options.patch_size()));
  }
  const bool class_token = options.class_token();
  const DropOptions& drop = options.drop();
  const int64_t dim = options.embed_dim();
  const int64_t grid = options.img_size() / options.patch_size();
  const int64_t tokens = grid * grid + (class_token ? 1 : 0);
  patch_embed = register_module("patch_embed",
                                PatchEmbed(PatchEmbedOptions(options.patch_size(), options.in_chans(), dim)));
  if (class_token) cls_token = register_parameter("cls_token", torch::zeros({1, 1, dim}));
  pos_embed = register_parameter("pos_embed", torch::zeros({1, tokens, dim}));
  pos_drop_ = register_module("pos_drop", torch::nn::Dropout(drop.drop_rate()));
  blocks = register_module("blocks", torch::nn::ModuleList());
  const auto rates = DropPathRates(drop.drop_path_rate(), options.depth());
  for (int64_t i = 0; i < options.depth(); ++i) {
    blocks->push_back(VitBlock(VitBlockOptions(dim, options.num_heads())
                                   .mlp_ratio(options.mlp_ratio())
                                   .qkv_bias(options.qkv_bias())
                                   .drop(drop)
                                   .drop_path(rates[i])));
  }
  // timm: the final norm before token pooling ("norm"), or after average pooling ("fc_norm", norm Identity).
  norm = register_module(class_token ? "norm" : "fc_norm", VitLayerNorm(dim));
  head_drop_ = register_module("head_drop", torch::nn::Dropout(drop.drop_rate()));
  head = register_module("head", torch::nn::Linear(dim, options.num_classes()));

  // timm's init_weights('') : pos_embed trunc_normal(.02), cls_token normal(1e-6), Linear trunc_normal(.02).
  torch::NoGradGuard no_grad;
  TruncNormal(pos_embed, 0.02);
  if (class_token) cls_token.normal_(0.0, 1e-6);
  InitLinearsTimm(*this);
}

void VisionTransformerImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "nmsparse::VisionTransformer(img_size=" << options.img_size()
         << ", patch_size=" << options.patch_size() << ", in_chans=" << options.in_chans()
         << ", num_classes=" << options.num_classes() << ", embed_dim=" << options.embed_dim()
         << ", depth=" << options.depth() << ", num_heads=" << options.num_heads()
         << ", mlp_ratio=" << options.mlp_ratio() << ", qkv_bias=" << options.qkv_bias()
         << ", class_token=" << options.class_token() << ")";
}

// timm's VisionTransformer.group_matcher: the stem is layer 0, block i layer i + 1, the final norm joins the
// last block, the head is last.
LayerGroupMatcher VisionTransformerImpl::group_matcher() const {
  return {{0, R"(^cls_token|reg_token|pos_embed|patch_embed|norm_pre)", {}},
          {1, R"(^blocks\.(\d+))", {}},
          {1, R"(^norm)", {kMatchPreviousGroup}}};
}

torch::Tensor VisionTransformerImpl::forward(const torch::Tensor& images) {
  auto x = patch_embed(images).flatten(1, 2);  // [B, N, D]
  if (options.class_token()) x = torch::cat({cls_token.expand({x.size(0), -1, -1}), x}, 1);
  x = pos_drop_(x + pos_embed);
  for (const auto& block : *blocks) x = block->as<VitBlockImpl>()->forward(x);
  x = options.class_token() ? norm(x).select(1, 0)
                            : norm(x.mean(1));  // timm global_pool: "token", else "avg"
  return head(head_drop_(x));
}

}  // namespace nmsparse
