#include "schemas/model_catalog.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nmsparse {
namespace {

// What every family shares: the name, the input and the stem.
ModelArch Common(const std::string& name, ModelFamily family, int img, int patch, int chans, int classes,
                 int dim) {
  ModelArch a;
  a.name = name;
  a.family = family;
  a.img_size = img;
  a.patch_size = patch;
  a.in_chans = chans;
  a.num_classes = classes;
  a.embed_dim = dim;
  return a;
}

ModelArch Vit(const std::string& name, int img, int patch, int chans, int classes, int dim, int depth,
              int heads) {
  ModelArch a = Common(name, ModelFamily::kVit, img, patch, chans, classes, dim);
  a.depth = depth;
  a.num_heads = heads;
  a.class_token = true;
  return a;
}

ModelArch SwinV2(const std::string& name, int img, int patch, int chans, int classes, int embed,
                 std::vector<int> depths, std::vector<int> heads, int window) {
  ModelArch a = Common(name, ModelFamily::kSwinV2, img, patch, chans, classes, embed);
  a.depth = 0;
  a.num_heads = 0;
  a.depths = std::move(depths);
  a.stage_heads = std::move(heads);
  a.window_size = window;
  a.class_token = false;
  return a;
}

const std::map<std::string, ModelArch>& Catalog() {
  static const auto* catalog = [] {
    auto* m = new std::map<std::string, ModelArch>;
    auto add = [m](ModelArch a) { (*m)[a.name] = std::move(a); };
    add(Vit("vit_tiny_patch16_224", 224, 16, 3, 1000, 192, 12, 3));
    add(Vit("vit_small_patch16_224", 224, 16, 3, 1000, 384, 12, 6));
    add(Vit("vit_base_patch16_224", 224, 16, 3, 1000, 768, 12, 12));
    add(Vit("vit_large_patch16_224", 224, 16, 3, 1000, 1024, 24, 16));
    // Small variants for 28x28 grey-scale 10-class data (Fashion-MNIST): nano for tests, micro for demos.
    add(Vit("vit_nano_patch7_28", 28, 7, 1, 10, 32, 2, 2));
    add(Vit("vit_micro_patch4_28", 28, 4, 1, 10, 64, 4, 4));
    add(SwinV2("swinv2_tiny_window8_256", 256, 4, 3, 1000, 96, {2, 2, 6, 2}, {3, 6, 12, 24}, 8));
    add(SwinV2("swinv2_small_window8_256", 256, 4, 3, 1000, 96, {2, 2, 18, 2}, {3, 6, 12, 24}, 8));
    add(SwinV2("swinv2_base_window8_256", 256, 4, 3, 1000, 128, {2, 2, 18, 2}, {4, 8, 16, 32}, 8));
    add(SwinV2("swinv2_micro_window7_28", 28, 2, 1, 10, 32, {2, 2}, {2, 4}, 7));
    return m;
  }();
  return *catalog;
}

bool Wanted(const std::vector<SparsityLocation>& locs, SparsityLocation loc) {
  return std::find(locs.begin(), locs.end(), loc) != locs.end();
}

// The sparsifiable weights of one transformer block (ViT block or SwinV2 block) of width `dim`.
void AddBlockLayers(const std::string& prefix, int64_t dim, int64_t hidden,
                    const std::vector<SparsityLocation>& locs, std::vector<LayerShape>* out) {
  const SparsityLocation qkv[] = {SparsityLocation::kQ, SparsityLocation::kK, SparsityLocation::kV};
  for (int i = 0; i < 3; ++i) {
    if (Wanted(locs, qkv[i])) {
      out->push_back({prefix + "attn.qkv.weight", qkv[i], {dim, dim}, i * dim});
    }
  }
  if (Wanted(locs, SparsityLocation::kO)) {
    out->push_back({prefix + "attn.proj.weight", SparsityLocation::kO, {dim, dim}, 0});
  }
  if (Wanted(locs, SparsityLocation::kFF)) {
    out->push_back({prefix + "mlp.fc1.weight", SparsityLocation::kFF, {hidden, dim}, 0});
    out->push_back({prefix + "mlp.fc2.weight", SparsityLocation::kFF, {dim, hidden}, 0});
  }
}

int64_t Hidden(const ModelArch& arch, int64_t dim) { return static_cast<int64_t>(dim * arch.mlp_ratio); }

// Parameters of one block as timm counts them (both norms, attention, MLP).
int64_t VitBlockParams(const ModelArch& arch, int64_t d) {
  const int64_t h = Hidden(arch, d);
  const int64_t qkv = 3 * d * d + (arch.qkv_bias ? 3 * d : 0);
  return 2 * d + qkv + (d * d + d) + 2 * d + (h * d + h) + (d * h + d);
}

// SwinV2 block: logit_scale, cpb_mlp (Linear(2,512)+bias, Linear(512,heads) no bias), qkv without bias plus
// q_bias/v_bias, proj, post-norms norm1/norm2 and the MLP. k_bias and the position tables are buffers.
int64_t SwinBlockParams(const ModelArch& arch, int64_t d, int64_t heads) {
  const int64_t h = Hidden(arch, d);
  const int64_t cpb = (2 * 512 + 512) + 512 * heads;
  const int64_t qkv = 3 * d * d + (arch.qkv_bias ? 2 * d : 0);
  return heads + cpb + qkv + (d * d + d) + 2 * d + (h * d + h) + (d * h + d) + 2 * d;
}

}  // namespace

int64_t LayerShape::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

absl::StatusOr<ModelArch> LookupModel(const std::string& name, int img_size, int in_chans, int num_classes) {
  const auto& catalog = Catalog();
  auto it = catalog.find(name);
  if (it == catalog.end()) {
    return absl::NotFoundError(
        absl::StrCat("unknown model '", name, "'; known models: ", absl::StrJoin(ModelNames(), ", ")));
  }
  ModelArch arch = it->second;
  if (img_size > 0) arch.img_size = img_size;
  if (in_chans > 0) arch.in_chans = in_chans;
  if (num_classes > 0) arch.num_classes = num_classes;
  return arch;
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const auto& [name, arch] : Catalog()) names.push_back(name);
  return names;
}

std::vector<LayerShape> SparsifiableLayers(const ModelArch& arch, const std::vector<SparsityLocation>& locs) {
  std::vector<LayerShape> out;
  const int64_t p = arch.patch_size;
  if (Wanted(locs, SparsityLocation::kC)) {
    out.push_back(
        {"patch_embed.proj.weight", SparsityLocation::kC, {arch.embed_dim, arch.in_chans, p, p}, 0});
  }
  if (arch.family == ModelFamily::kVit) {
    for (int b = 0; b < arch.depth; ++b) {
      AddBlockLayers(absl::StrCat("blocks.", b, "."), arch.embed_dim, Hidden(arch, arch.embed_dim), locs,
                     &out);
    }
    return out;
  }
  int64_t dim = arch.embed_dim;
  for (size_t s = 0; s < arch.depths.size(); ++s, dim *= 2) {
    for (int b = 0; b < arch.depths[s]; ++b) {
      AddBlockLayers(absl::StrCat("layers.", s, ".blocks.", b, "."), dim, Hidden(arch, dim), locs, &out);
    }
  }
  return out;
}

int64_t ParameterCount(const ModelArch& arch) {
  const int64_t c = arch.in_chans, p = arch.patch_size, k = arch.num_classes;
  int64_t d = arch.embed_dim;
  if (arch.family == ModelFamily::kVit) {
    const int64_t grid = arch.img_size / p;
    const int64_t tokens = grid * grid + (arch.class_token ? 1 : 0);
    int64_t total = d * c * p * p + d;                 // patch_embed.proj
    total += (arch.class_token ? d : 0) + tokens * d;  // cls_token, pos_embed
    total += arch.depth * VitBlockParams(arch, d);
    return total + 2 * d + d * k + k;  // norm, head
  }
  int64_t total = d * c * p * p + d + 2 * d;  // patch_embed.proj and patch_embed.norm
  for (size_t s = 0; s < arch.depths.size(); ++s) {
    if (s > 0) {  // layers.s.downsample: reduction Linear(4d, 2d, no bias) and norm(2d).
      total += 4 * d * 2 * d + 2 * 2 * d;
      d *= 2;
    }
    total += arch.depths[s] * SwinBlockParams(arch, d, arch.stage_heads[s]);
  }
  return total + 2 * d + d * k + k;  // norm, head.fc
}

}  // namespace nmsparse
