#include "schemas/model_geometry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace nmsparse {
namespace {

constexpr SparsityLocation kQ = SparsityLocation::kQ, kK = SparsityLocation::kK, kV = SparsityLocation::kV,
                           kO = SparsityLocation::kO, kFF = SparsityLocation::kFF, kC = SparsityLocation::kC;

// Appends a model's parameters and matmuls in module order.
class GeometryBuilder {
 public:
  void Add(const std::string& name, std::vector<int64_t> shape) {
    geometry_.parameters.push_back({name, shape});
  }

  // A weight over `rows` rows per image, sparsifiable at `locations`.
  void Weight(const std::string& name, const std::vector<int64_t>& shape, int64_t rows,
              std::vector<SparsityLocation> locations) {
    Add(name, shape);
    geometry_.matmuls.push_back(
        {name, shape, rows, geometry_.parameters.back().numel(), std::move(locations)});
  }

  // A Linear: weight [out, in] over `rows` rows per image, sparsifiable at `locations`; then its bias.
  void Linear(const std::string& prefix, int64_t in, int64_t out, bool bias, int64_t rows,
              std::vector<SparsityLocation> locations = {}) {
    Weight(prefix + "weight", {out, in}, rows, std::move(locations));
    if (bias) Add(prefix + "bias", {out});
  }

  void Norm(const std::string& prefix, int64_t dim) {
    Add(prefix + "weight", {dim});
    Add(prefix + "bias", {dim});
  }

  // timm's PatchEmbed: a conv with kernel = stride = patch over every patch, then an optional norm.
  void PatchEmbed(const ModelArch& arch, bool norm) {
    const int64_t d = arch.embed_dim, p = arch.patch_size, grid = arch.img_size / arch.patch_size;
    Weight("patch_embed.proj.weight", {d, arch.in_chans, p, p}, grid * grid, {kC});
    Add("patch_embed.proj.bias", {d});
    if (norm) Norm("patch_embed.norm.", d);
  }

  // Self-attention's q kᵀ and attn v: each of `rows` queries against `keys` keys of width `dim`.
  void Attention(const std::string& prefix, int64_t rows, int64_t keys, int64_t dim) {
    geometry_.matmuls.push_back({prefix + "attn", {}, rows, 2 * keys * dim, {}});
  }

  // timm's Mlp: fc1 (dim -> dim * mlp_ratio), fc2 back, both sparsifiable at FF.
  void Mlp(const ModelArch& arch, const std::string& prefix, int64_t d, int64_t rows) {
    const int64_t hidden = static_cast<int64_t>(d * arch.mlp_ratio);
    Linear(prefix + "fc1.", d, hidden, true, rows, {kFF});
    Linear(prefix + "fc2.", hidden, d, true, rows, {kFF});
  }

  ModelGeometry Take() { return std::move(geometry_); }

 private:
  ModelGeometry geometry_;
};

// timm's ViT Block over `tokens` tokens: norm1, attn (fused qkv, proj), norm2, mlp.
void VitBlock(const ModelArch& arch, const std::string& prefix, int64_t d, int64_t tokens,
              GeometryBuilder* g) {
  g->Norm(prefix + "norm1.", d);
  g->Linear(prefix + "attn.qkv.", d, 3 * d, arch.qkv_bias, tokens, {kQ, kK, kV});
  g->Attention(prefix, tokens, tokens, d);
  g->Linear(prefix + "attn.proj.", d, d, true, tokens, {kO});
  g->Norm(prefix + "norm2.", d);
  g->Mlp(arch, prefix + "mlp.", d, tokens);
}

// timm's SwinTransformerV2Block over a res x res map in windows of `window`: the attention's own logit_scale,
// q_bias, v_bias (k_bias and the position tables are buffers), then cpb_mlp (Linear(2,512)+bias, ReLU,
// Linear(512,heads) no bias) over the (2 window - 1)^2 relative offsets, qkv without bias, proj; then the
// post-norms norm1 / norm2 around the MLP.
void SwinBlock(const ModelArch& arch, const std::string& prefix, int64_t d, int64_t heads, int64_t res,
               int64_t window, GeometryBuilder* g) {
  const std::string attn = prefix + "attn.";
  const int64_t tokens = res * res, table = (2 * window - 1) * (2 * window - 1);
  g->Add(attn + "logit_scale", {heads, 1, 1});
  if (arch.qkv_bias) {
    g->Add(attn + "q_bias", {d});
    g->Add(attn + "v_bias", {d});
  }
  g->Linear(attn + "cpb_mlp.0.", 2, 512, true, table);
  g->Linear(attn + "cpb_mlp.2.", 512, heads, false, table);
  g->Linear(attn + "qkv.", d, 3 * d, false, tokens, {kQ, kK, kV});
  g->Attention(prefix, tokens, window * window, d);
  g->Linear(attn + "proj.", d, d, true, tokens, {kO});
  g->Norm(prefix + "norm1.", d);
  g->Mlp(arch, prefix + "mlp.", d, tokens);
  g->Norm(prefix + "norm2.", d);
}

ModelGeometry VitGeometry(const ModelArch& arch) {
  const int64_t d = arch.embed_dim, grid = arch.img_size / arch.patch_size;
  const int64_t tokens = grid * grid + (arch.class_token ? 1 : 0);
  GeometryBuilder g;
  if (arch.class_token) g.Add("cls_token", {1, 1, d});
  g.Add("pos_embed", {1, tokens, d});
  g.PatchEmbed(arch, false);
  for (int b = 0; b < arch.depth; ++b) VitBlock(arch, absl::StrCat("blocks.", b, "."), d, tokens, &g);
  g.Norm(arch.class_token ? "norm." : "fc_norm.", d);  // timm: fc_norm after average pooling.
  g.Linear("head.", d, arch.num_classes, true, 1);
  return g.Take();
}

ModelGeometry SwinV2Geometry(const ModelArch& arch) {
  GeometryBuilder g;
  g.PatchEmbed(arch, true);
  int64_t d = arch.embed_dim, res = arch.img_size / arch.patch_size;
  for (size_t s = 0; s < arch.depths.size(); ++s) {
    const std::string stage = absl::StrCat("layers.", s, ".");
    if (s >
        0) {  // PatchMerging at the start of every later stage: 2x2 patches, reduction 4d -> 2d, norm(2d).
      res /= 2;
      g.Linear(stage + "downsample.reduction.", 4 * d, 2 * d, false, res * res);
      d *= 2;
      g.Norm(stage + "downsample.norm.", d);
    }
    const int64_t window = std::min<int64_t>(arch.window_size, res);  // timm: never past the map.
    for (int b = 0; b < arch.depths[s]; ++b) {
      SwinBlock(arch, absl::StrCat(stage, "blocks.", b, "."), d, arch.stage_heads[s], res, window, &g);
    }
  }
  g.Norm("norm.", d);
  g.Linear("head.fc.", d, arch.num_classes, true, 1);
  return g.Take();
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

}  // namespace

int64_t ParameterShape::numel() const { return Numel(shape); }

int64_t LayerShape::numel() const { return Numel(shape); }

ModelGeometry Geometry(const ModelArch& arch) {
  return arch.family == ModelFamily::kVit ? VitGeometry(arch) : SwinV2Geometry(arch);
}

std::vector<LayerShape> SparsifiableLayers(const ModelArch& arch, const std::vector<SparsityLocation>& locs) {
  std::vector<LayerShape> out;
  for (const MatMul& m : Geometry(arch).matmuls) {
    const int64_t blocks = static_cast<int64_t>(m.locations.size());
    for (int64_t i = 0; i < blocks; ++i) {
      if (std::find(locs.begin(), locs.end(), m.locations[i]) == locs.end()) continue;
      std::vector<int64_t> shape = m.weight_shape;
      shape[0] /= blocks;
      out.push_back({m.name, m.locations[i], shape, i * shape[0]});
    }
  }
  return out;
}

std::vector<ParameterShape> ModelParameters(const ModelArch& arch) { return Geometry(arch).parameters; }

int64_t ParameterCount(const ModelArch& arch) {
  int64_t total = 0;
  for (const auto& p : ModelParameters(arch)) total += p.numel();
  return total;
}

}  // namespace nmsparse
