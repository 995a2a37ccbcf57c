#include "worker/trainer/flops.h"

#include <algorithm>

namespace nmsparse {
namespace {

// One transformer block over `tokens` tokens of width `dim`, attention over groups of `attn_tokens`.
double BlockFlops(double tokens, double attn_tokens, double dim, double mlp_ratio) {
  const double hidden = dim * mlp_ratio;
  const double qkv = 2.0 * tokens * dim * 3.0 * dim;
  const double attention = 2.0 * 2.0 * tokens * attn_tokens * dim;  // q k^T and attn v
  const double proj = 2.0 * tokens * dim * dim;
  const double mlp = 2.0 * 2.0 * tokens * dim * hidden;
  return qkv + attention + proj + mlp;
}

double VitFlops(const ModelArch& a) {
  const double grid = a.img_size / a.patch_size;
  const double patches = grid * grid;
  const double tokens = patches + (a.class_token ? 1 : 0);
  const double patch_embed = 2.0 * patches * a.in_chans * a.patch_size * a.patch_size * a.embed_dim;
  const double head = 2.0 * a.embed_dim * a.num_classes;
  return patch_embed + a.depth * BlockFlops(tokens, tokens, a.embed_dim, a.mlp_ratio) + head;
}

double SwinV2Flops(const ModelArch& a) {
  const int64_t grid = a.img_size / a.patch_size;
  double flops = 2.0 * grid * grid * a.in_chans * a.patch_size * a.patch_size * a.embed_dim;
  int64_t res = grid;
  double dim = a.embed_dim;
  for (size_t i = 0; i < a.depths.size(); ++i) {
    if (i > 0) {
      res /= 2;
      flops += 2.0 * res * res * (4.0 * dim) * (2.0 * dim);  // patch merging
      dim *= 2.0;
    }
    const double window = std::min<int64_t>(a.window_size, res);
    const double table = (2.0 * window - 1.0) * (2.0 * window - 1.0);
    const double cpb = 2.0 * table * (2.0 * 512.0 + 512.0 * a.stage_heads[i]);
    flops +=
        a.depths[i] * (BlockFlops(static_cast<double>(res * res), window * window, dim, a.mlp_ratio) + cpb);
  }
  return flops + 2.0 * dim * a.num_classes;
}

}  // namespace

double ForwardFlops(const ModelArch& arch) {
  return arch.family == ModelFamily::kVit ? VitFlops(arch) : SwinV2Flops(arch);
}

}  // namespace nmsparse
