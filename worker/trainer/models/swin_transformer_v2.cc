#include "worker/trainer/models/swin_transformer_v2.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <utility>

namespace nmsparse {
namespace {

namespace F = torch::nn::functional;

// [B, H, W, C] -> [B * num_windows, wh, ww, C]
torch::Tensor WindowPartition(const torch::Tensor& x, Size2 ws) {
  const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
  return x.view({b, h / ws[0], ws[0], w / ws[1], ws[1], c})
      .permute({0, 1, 3, 2, 4, 5})
      .contiguous()
      .view({-1, ws[0], ws[1], c});
}

// [B * num_windows, wh, ww, C] -> [B, H, W, C]
torch::Tensor WindowReverse(const torch::Tensor& windows, Size2 ws, int64_t h, int64_t w) {
  const int64_t c = windows.size(-1);
  return windows.view({-1, h / ws[0], w / ws[1], ws[0], ws[1], c})
      .permute({0, 1, 3, 2, 4, 5})
      .contiguous()
      .view({-1, h, w, c});
}

// Log-spaced relative coordinates: sign(x) * log2(|8x/(s-1)| + 1) / log2(8), where s is the pre-training
// window when one is given (timm's fine-tunes, whose offsets then reach past +-1), else the window itself.
torch::Tensor RelativeCoordsTable(Size2 ws, Size2 pretrained) {
  auto h = torch::arange(-(ws[0] - 1), ws[0], torch::kFloat32);
  auto w = torch::arange(-(ws[1] - 1), ws[1], torch::kFloat32);
  auto table = torch::stack(torch::meshgrid({h, w}, "ij")).permute({1, 2, 0}).contiguous().unsqueeze(0);
  // timm tests the first entry for both; a size of 1 has only the coordinate 0, so never divide by 0.
  const Size2 scale = pretrained[0] > 0 ? pretrained : ws;
  table.select(-1, 0).div_(static_cast<double>(std::max<int64_t>(scale[0] - 1, 1)));
  table.select(-1, 1).div_(static_cast<double>(std::max<int64_t>(scale[1] - 1, 1)));
  table.mul_(8.0);
  return torch::sign(table) * torch::log2(table.abs() + 1.0) / std::log2(8.0);
}

// Index of each (query, key) pair of a window into the (2Wh-1)*(2Ww-1) relative offsets.
torch::Tensor RelativePositionIndex(Size2 ws) {
  auto coords = torch::stack(torch::meshgrid({torch::arange(ws[0]), torch::arange(ws[1])}, "ij")).flatten(1);
  auto rel = (coords.unsqueeze(2) - coords.unsqueeze(1)).permute({1, 2, 0}).contiguous();  // [N, N, 2]
  rel.select(-1, 0).add_(ws[0] - 1).mul_(2 * ws[1] - 1);
  rel.select(-1, 1).add_(ws[1] - 1);
  return rel.sum(-1);
}

// -100 between tokens that come from different regions of the cyclically shifted map, 0 within a region.
torch::Tensor ShiftedWindowMask(int64_t h, int64_t w, Size2 ws, Size2 shift) {
  auto img_mask = torch::zeros({1, h, w, 1});
  const std::array<std::array<int64_t, 2>, 3> hs = {
      {{0, h - ws[0]}, {h - ws[0], h - shift[0]}, {h - shift[0], h}}};
  const std::array<std::array<int64_t, 2>, 3> wss = {
      {{0, w - ws[1]}, {w - ws[1], w - shift[1]}, {w - shift[1], w}}};
  int64_t count = 0;
  for (const auto& hr : hs) {
    for (const auto& wr : wss) {
      img_mask.slice(1, hr[0], hr[1]).slice(2, wr[0], wr[1]).fill_(static_cast<double>(count++));
    }
  }
  auto windows = WindowPartition(img_mask, ws).view({-1, ws[0] * ws[1]});
  auto diff = windows.unsqueeze(1) - windows.unsqueeze(2);
  return torch::zeros_like(diff).masked_fill(diff != 0, -100.0);
}

}  // namespace

WindowAttentionImpl::WindowAttentionImpl(const WindowAttentionOptions& options) : options(options) {
  reset();
}

void WindowAttentionImpl::reset() {
  const int64_t dim = options.dim(), num_heads = options.num_heads();
  const Size2 window_size = options.window_size();
  if (dim % num_heads != 0)
    throw std::invalid_argument("window attention: dim must be divisible by num_heads");
  logit_scale = register_parameter("logit_scale", torch::full({num_heads, 1, 1}, std::log(10.0)));
  cpb_mlp = register_module(
      "cpb_mlp",
      torch::nn::Sequential(torch::nn::Linear(torch::nn::LinearOptions(2, 512).bias(true)), torch::nn::ReLU(),
                            torch::nn::Linear(torch::nn::LinearOptions(512, num_heads).bias(false))));
  qkv = register_module("qkv", SparseLinear(SparseLinearOptions(dim, 3 * dim).bias(false)));
  if (options.qkv_bias()) {
    q_bias = register_parameter("q_bias", torch::zeros({dim}));
    k_bias = register_buffer("k_bias", torch::zeros({dim}));
    v_bias = register_parameter("v_bias", torch::zeros({dim}));
  }
  attn_drop_ = register_module("attn_drop", torch::nn::Dropout(options.attn_drop()));
  proj = register_module("proj", SparseLinear(dim, dim));
  proj_drop_ = register_module("proj_drop", torch::nn::Dropout(options.proj_drop()));
  relative_coords_table = register_buffer("relative_coords_table",
                                          RelativeCoordsTable(window_size, options.pretrained_window_size()));
  relative_position_index = register_buffer("relative_position_index", RelativePositionIndex(window_size));
}

void WindowAttentionImpl::pretty_print(std::ostream& stream) const {
  stream << "nmsparse::WindowAttention(dim=" << options.dim() << ", window_size=(" << options.window_size()[0]
         << ", " << options.window_size()[1] << "), pretrained_window_size=("
         << options.pretrained_window_size()[0] << ", " << options.pretrained_window_size()[1]
         << "), num_heads=" << options.num_heads() << ")";
}

torch::Tensor WindowAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& mask) {
  const int64_t b = x.size(0), n = x.size(1), c = x.size(2), num_heads = options.num_heads();
  // Through the layer (its 2:4 kernel when chosen), with the q/k/v biases as its bias.
  const torch::Tensor qkv_out =
      q_bias.defined() ? qkv->ForwardWithBias(x, torch::cat({q_bias, k_bias, v_bias})) : qkv->forward(x);
  auto parts = qkv_out.reshape({b, n, 3, num_heads, -1}).permute({2, 0, 3, 1, 4}).unbind(0);
  auto q = F::normalize(parts[0], F::NormalizeFuncOptions().dim(-1));
  auto k = F::normalize(parts[1], F::NormalizeFuncOptions().dim(-1));
  auto& v = parts[2];
  auto attn = torch::matmul(q, k.transpose(-2, -1)) * torch::clamp_max(logit_scale, std::log(100.0)).exp();

  auto bias_table = cpb_mlp->forward(relative_coords_table).view({-1, num_heads});
  auto bias =
      bias_table.index_select(0, relative_position_index.view(-1)).view({n, n, -1}).permute({2, 0, 1});
  attn = attn + 16.0 * torch::sigmoid(bias).unsqueeze(0);
  if (mask.defined()) {
    const int64_t num_windows = mask.size(0);
    attn = attn.view({-1, num_windows, num_heads, n, n}) + mask.unsqueeze(1).unsqueeze(0);
    attn = attn.view({-1, num_heads, n, n});
  }
  attn = attn_drop_(torch::softmax(attn, -1));
  auto out = torch::matmul(attn, v).transpose(1, 2).reshape({b, n, c});
  return proj_drop_(proj->forward(out));
}

SwinV2BlockImpl::SwinV2BlockImpl(const SwinV2BlockOptions& options) : options(options) { reset(); }

void SwinV2BlockImpl::reset() {
  const int64_t dim = options.dim();
  const Size2 input_resolution = options.input_resolution();
  const DropOptions& drop = options.drop();
  // timm's _calc_window_shift: a window never exceeds the feature map, and a map that fits one window is not
  // shifted.
  for (int i = 0; i < 2; ++i) {
    window_size_[i] = std::min(input_resolution[i], options.window_size());
    shift_size_[i] = input_resolution[i] <= window_size_[i] ? 0 : options.shift_size();
  }
  attn = register_module(
      "attn", WindowAttention(WindowAttentionOptions(dim, window_size_, options.num_heads())
                                  .qkv_bias(options.qkv_bias())
                                  .attn_drop(drop.attn_drop_rate())
                                  .proj_drop(drop.drop_rate())
                                  .pretrained_window_size(
                                      {options.pretrained_window_size(), options.pretrained_window_size()})));
  norm1 = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  mlp = register_module(
      "mlp", Mlp(MlpOptions(dim, static_cast<int64_t>(dim * options.mlp_ratio())).drop(drop.drop_rate())));
  norm2 = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  if (shift_size_[0] > 0 || shift_size_[1] > 0) {
    const int64_t hp = (input_resolution[0] + window_size_[0] - 1) / window_size_[0] * window_size_[0];
    const int64_t wp = (input_resolution[1] + window_size_[1] - 1) / window_size_[1] * window_size_[1];
    attn_mask = register_buffer("attn_mask", ShiftedWindowMask(hp, wp, window_size_, shift_size_));
  }
}

void SwinV2BlockImpl::pretty_print(std::ostream& stream) const {
  stream << "nmsparse::SwinV2Block(dim=" << options.dim() << ", input_resolution=("
         << options.input_resolution()[0] << ", " << options.input_resolution()[1]
         << "), num_heads=" << options.num_heads() << ", window_size=" << options.window_size()
         << ", shift_size=" << options.shift_size() << ", mlp_ratio=" << options.mlp_ratio()
         << ", drop_path=" << options.drop_path() << ")";
}

torch::Tensor SwinV2BlockImpl::WindowedAttention(const torch::Tensor& x) {
  const int64_t h = x.size(1), w = x.size(2), c = x.size(3);
  const bool shifted = shift_size_[0] > 0 || shift_size_[1] > 0;
  auto shifted_x = shifted ? torch::roll(x, {-shift_size_[0], -shift_size_[1]}, {1, 2}) : x;
  const int64_t pad_h = (window_size_[0] - h % window_size_[0]) % window_size_[0];
  const int64_t pad_w = (window_size_[1] - w % window_size_[1]) % window_size_[1];
  if (pad_h > 0 || pad_w > 0) shifted_x = F::pad(shifted_x, F::PadFuncOptions({0, 0, 0, pad_w, 0, pad_h}));
  const int64_t hp = h + pad_h, wp = w + pad_w;

  auto windows = WindowPartition(shifted_x, window_size_).view({-1, window_size_[0] * window_size_[1], c});
  auto attn_windows = attn(windows, attn_mask).view({-1, window_size_[0], window_size_[1], c});
  shifted_x = WindowReverse(attn_windows, window_size_, hp, wp);
  if (pad_h > 0 || pad_w > 0) shifted_x = shifted_x.slice(1, 0, h).slice(2, 0, w).contiguous();
  return shifted ? torch::roll(shifted_x, {shift_size_[0], shift_size_[1]}, {1, 2}) : shifted_x;
}

torch::Tensor SwinV2BlockImpl::forward(const torch::Tensor& x) {
  const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
  auto y = x + DropPath(norm1(WindowedAttention(x)), options.drop_path(), is_training());
  y = y.reshape({b, -1, c});
  y = y + DropPath(norm2(mlp(y)), options.drop_path(), is_training());
  return y.reshape({b, h, w, c});
}

PatchMergingImpl::PatchMergingImpl(const PatchMergingOptions& options) : options(options) { reset(); }

void PatchMergingImpl::reset() {
  reduction = register_module(
      "reduction",
      torch::nn::Linear(torch::nn::LinearOptions(4 * options.dim(), options.out_dim()).bias(false)));
  norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.out_dim()})));
}

void PatchMergingImpl::pretty_print(std::ostream& stream) const {
  stream << "nmsparse::PatchMerging(dim=" << options.dim() << ", out_dim=" << options.out_dim() << ")";
}

torch::Tensor PatchMergingImpl::forward(const torch::Tensor& x) {
  auto y = F::pad(x, F::PadFuncOptions({0, 0, 0, x.size(2) % 2, 0, x.size(1) % 2}));
  const int64_t b = y.size(0), h = y.size(1), w = y.size(2), c = y.size(3);
  y = y.reshape({b, h / 2, 2, w / 2, 2, c}).permute({0, 1, 3, 4, 2, 5}).flatten(3);
  return norm(reduction(y));
}

SwinV2StageImpl::SwinV2StageImpl(const SwinV2StageOptions& options) : options(options) { reset(); }

void SwinV2StageImpl::reset() {
  const int64_t dim = options.dim(), out_dim = options.out_dim(), window_size = options.window_size();
  const Size2 input_resolution = options.input_resolution();
  Size2 resolution = input_resolution;
  if (options.downsample()) {
    downsample = register_module("downsample", PatchMerging(PatchMergingOptions(dim).out_dim(out_dim)));
    resolution = {input_resolution[0] / 2, input_resolution[1] / 2};
  } else if (dim != out_dim) {
    throw std::invalid_argument("swinv2 stage: a stage without downsampling must keep its width");
  }
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < options.depth(); ++i) {
    blocks->push_back(SwinV2Block(SwinV2BlockOptions(out_dim, resolution, options.num_heads())
                                      .window_size(window_size)
                                      .shift_size(i % 2 == 0 ? 0 : window_size / 2)
                                      .mlp_ratio(options.mlp_ratio())
                                      .qkv_bias(options.qkv_bias())
                                      .drop(options.drop())
                                      .drop_path(options.drop_path()[i])
                                      .pretrained_window_size(options.pretrained_window_size())));
  }
}

void SwinV2StageImpl::pretty_print(std::ostream& stream) const {
  stream << "nmsparse::SwinV2Stage(dim=" << options.dim() << ", out_dim=" << options.out_dim()
         << ", depth=" << options.depth() << ", num_heads=" << options.num_heads() << ")";
}

torch::Tensor SwinV2StageImpl::forward(const torch::Tensor& x) {
  auto y = downsample ? downsample(x) : x;
  for (const auto& block : *blocks) y = block->as<SwinV2BlockImpl>()->forward(y);
  return y;
}

ClassifierHeadImpl::ClassifierHeadImpl(const ClassifierHeadOptions& options) : options(options) { reset(); }

void ClassifierHeadImpl::reset() {
  drop_ = register_module("drop", torch::nn::Dropout(options.drop_rate()));
  fc = register_module("fc", torch::nn::Linear(options.in_features(), options.num_classes()));
}

void ClassifierHeadImpl::pretty_print(std::ostream& stream) const {
  stream << "nmsparse::ClassifierHead(in_features=" << options.in_features()
         << ", num_classes=" << options.num_classes() << ", drop_rate=" << options.drop_rate() << ")";
}

torch::Tensor ClassifierHeadImpl::forward(const torch::Tensor& x) { return fc(drop_(x.mean({1, 2}))); }

SwinTransformerV2Options SwinTransformerV2OptionsOf(const ModelArch& arch, const DropOptions& drop) {
  const auto wide = [](const std::vector<int>& v) { return std::vector<int64_t>(v.begin(), v.end()); };
  return SwinTransformerV2Options()
      .img_size(arch.img_size)
      .patch_size(arch.patch_size)
      .in_chans(arch.in_chans)
      .num_classes(arch.num_classes)
      .embed_dim(arch.embed_dim)
      .depths(wide(arch.depths))
      .num_heads(wide(arch.stage_heads))
      .window_size(arch.window_size)
      .pretrained_window_sizes(wide(arch.pretrained_window_sizes))
      .mlp_ratio(arch.mlp_ratio)
      .qkv_bias(arch.qkv_bias)
      .drop(drop);
}

SwinTransformerV2Impl::SwinTransformerV2Impl(const SwinTransformerV2Options& options) : options(options) {
  const std::vector<int64_t>& depths = options.depths();
  const size_t num_stages = depths.size();
  if (num_stages == 0 || options.num_heads().size() != num_stages) {
    throw std::invalid_argument("swinv2: depths and num_heads must be non-empty and equal in length");
  }
  if (options.img_size() % options.patch_size() != 0) {
    throw std::invalid_argument("swinv2: img_size is not a multiple of patch_size");
  }
  const DropOptions& drop = options.drop();
  const int64_t grid = options.img_size() / options.patch_size();
  patch_embed = register_module(
      "patch_embed",
      PatchEmbed(
          PatchEmbedOptions(options.patch_size(), options.in_chans(), options.embed_dim()).norm(true)));

  int64_t total_depth = 0;
  for (int64_t d : depths) total_depth += d;
  const auto rates = DropPathRates(drop.drop_path_rate(), total_depth);

  layers = register_module("layers", torch::nn::ModuleList());
  int64_t in_dim = options.embed_dim(), scale = 1, block_index = 0;
  for (size_t i = 0; i < num_stages; ++i) {
    const int64_t out_dim = options.embed_dim() << i;
    std::vector<double> stage_rates(rates.begin() + block_index, rates.begin() + block_index + depths[i]);
    layers->push_back(SwinV2Stage(SwinV2StageOptions(in_dim, out_dim, Size2{grid / scale, grid / scale},
                                                     depths[i], options.num_heads()[i], options.window_size())
                                      .downsample(i > 0)
                                      .mlp_ratio(options.mlp_ratio())
                                      .qkv_bias(options.qkv_bias())
                                      .drop(drop)
                                      .drop_path(std::move(stage_rates))
                                      .pretrained_window_size(options.pretrained_window_sizes().empty()
                                                                  ? 0
                                                                  : options.pretrained_window_sizes()[i])));
    block_index += depths[i];
    in_dim = out_dim;
    if (i > 0) scale *= 2;
  }
  norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({in_dim})));
  head = register_module(
      "head",
      ClassifierHead(ClassifierHeadOptions(in_dim, options.num_classes()).drop_rate(drop.drop_rate())));

  // timm's init_weights: Linear trunc_normal(.02), then res-post-norms (norm1, norm2 of every block) to zero.
  InitLinearsTimm(*this);
  torch::NoGradGuard no_grad;
  for (const auto& stage : *layers) {
    for (const auto& block : *stage->as<SwinV2StageImpl>()->blocks) {
      auto* b = block->as<SwinV2BlockImpl>();
      for (auto* ln : {b->norm1.get(), b->norm2.get()}) {
        ln->weight.zero_();
        ln->bias.zero_();
      }
    }
  }
}

void SwinTransformerV2Impl::pretty_print(std::ostream& stream) const {
  const auto list = [](const std::vector<int64_t>& v) {
    std::string text;
    for (int64_t x : v) text += (text.empty() ? "" : ", ") + std::to_string(x);
    return "(" + text + ")";
  };
  stream << std::boolalpha << "nmsparse::SwinTransformerV2(img_size=" << options.img_size()
         << ", patch_size=" << options.patch_size() << ", in_chans=" << options.in_chans()
         << ", num_classes=" << options.num_classes() << ", embed_dim=" << options.embed_dim()
         << ", depths=" << list(options.depths()) << ", num_heads=" << list(options.num_heads())
         << ", window_size=" << options.window_size() << ", mlp_ratio=" << options.mlp_ratio()
         << ", qkv_bias=" << options.qkv_bias() << ")";
}

// timm's SwinTransformerV2.group_matcher: the stem is layer 0, each block a layer in stage order, a stage's
// downsample joins its first block, the final norm joins the last block, the head is last.
LayerGroupMatcher SwinTransformerV2Impl::group_matcher() const {
  return {{0, R"(^absolute_pos_embed|patch_embed)", {}},
          {1, R"(^layers\.(\d+).downsample)", {0}},
          {1, R"(^layers\.(\d+)\.\w+\.(\d+))", {}},
          {1, R"(^norm)", {kMatchPreviousGroup}}};
}

torch::Tensor SwinTransformerV2Impl::forward(const torch::Tensor& images) {
  auto x = patch_embed(images);
  for (const auto& stage : *layers) x = stage->as<SwinV2StageImpl>()->forward(x);
  return head(norm(x));
}

}  // namespace nmsparse
