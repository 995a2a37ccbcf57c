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
  a.mean = {0.485, 0.456, 0.406};  // timm's IMAGENET_DEFAULT_MEAN and _STD.
  a.std = {0.229, 0.224, 0.225};
  return a;
}

// A window-12 model at 192 fine-tuned at a larger window: its position bias still scales the relative
// coordinates by the pre-training window, 12 (6 in the last stage, whose 6x6 grid clamped the window).
ModelArch FineTuned(ModelArch a) {
  a.pretrained_window_sizes = {12, 12, 12, 6};
  if (a.img_size == 384) a.crop_pct = 1.0;
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
    add(SwinV2("swinv2_tiny_window16_256", 256, 4, 3, 1000, 96, {2, 2, 6, 2}, {3, 6, 12, 24}, 16));
    add(SwinV2("swinv2_small_window16_256", 256, 4, 3, 1000, 96, {2, 2, 18, 2}, {3, 6, 12, 24}, 16));
    add(SwinV2("swinv2_base_window16_256", 256, 4, 3, 1000, 128, {2, 2, 18, 2}, {4, 8, 16, 32}, 16));
    // timm's window-12 models at 192 default to their ImageNet-22k head (21841 classes).
    add(SwinV2("swinv2_base_window12_192", 192, 4, 3, 21841, 128, {2, 2, 18, 2}, {4, 8, 16, 32}, 12));
    add(SwinV2("swinv2_large_window12_192", 192, 4, 3, 21841, 192, {2, 2, 18, 2}, {6, 12, 24, 48}, 12));
    // timm's ImageNet-1k fine-tunes of the window-12 models (timm's cfg: crop_pct 1.0 at 384).
    add(FineTuned(SwinV2("swinv2_base_window12to16_192to256", 256, 4, 3, 1000, 128, {2, 2, 18, 2},
                         {4, 8, 16, 32}, 16)));
    add(FineTuned(SwinV2("swinv2_base_window12to24_192to384", 384, 4, 3, 1000, 128, {2, 2, 18, 2},
                         {4, 8, 16, 32}, 24)));
    add(FineTuned(SwinV2("swinv2_large_window12to16_192to256", 256, 4, 3, 1000, 192, {2, 2, 18, 2},
                         {6, 12, 24, 48}, 16)));
    add(FineTuned(SwinV2("swinv2_large_window12to24_192to384", 384, 4, 3, 1000, 192, {2, 2, 18, 2},
                         {6, 12, 24, 48}, 24)));
    add(SwinV2("swinv2_micro_window7_28", 28, 2, 1, 10, 32, {2, 2}, {2, 4}, 7));
    // The 28x28 grey models are nmsparse's, not timm's: evaluate the whole image, normalised to [-1, 1].
    for (const char* name : {"vit_nano_patch7_28", "vit_micro_patch4_28", "swinv2_micro_window7_28"}) {
      ModelArch& a = m->at(name);
      a.crop_pct = 1.0;
      a.mean = {0.5};
      a.std = {0.5};
    }
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

using Params = std::vector<ParameterShape>;

void Add(Params* out, const std::string& name, std::vector<int64_t> shape) {
  out->push_back({name, std::move(shape)});
}

void AddLinear(Params* out, const std::string& prefix, int64_t in, int64_t out_features, bool bias) {
  Add(out, prefix + "weight", {out_features, in});
  if (bias) Add(out, prefix + "bias", {out_features});
}

void AddNorm(Params* out, const std::string& prefix, int64_t dim) {
  Add(out, prefix + "weight", {dim});
  Add(out, prefix + "bias", {dim});
}

void AddPatchEmbed(Params* out, const ModelArch& arch, bool norm) {
  const int64_t d = arch.embed_dim, p = arch.patch_size;
  Add(out, "patch_embed.proj.weight", {d, arch.in_chans, p, p});
  Add(out, "patch_embed.proj.bias", {d});
  if (norm) AddNorm(out, "patch_embed.norm.", d);
}

void AddMlp(Params* out, const std::string& prefix, int64_t d, int64_t h) {
  AddLinear(out, prefix + "fc1.", d, h, true);
  AddLinear(out, prefix + "fc2.", h, d, true);
}

// timm's ViT Block: norm1, attn (fused qkv, proj), norm2, mlp.
void AddVitBlock(Params* out, const ModelArch& arch, const std::string& prefix, int64_t d) {
  AddNorm(out, prefix + "norm1.", d);
  AddLinear(out, prefix + "attn.qkv.", d, 3 * d, arch.qkv_bias);
  AddLinear(out, prefix + "attn.proj.", d, d, true);
  AddNorm(out, prefix + "norm2.", d);
  AddMlp(out, prefix + "mlp.", d, Hidden(arch, d));
}

// timm's SwinTransformerV2Block: the attention's own logit_scale, q_bias, v_bias (k_bias and the position
// tables are buffers), then cpb_mlp (Linear(2,512)+bias, ReLU, Linear(512,heads) no bias), qkv without bias,
// proj; then the post-norms norm1 / norm2 around the MLP.
void AddSwinBlock(Params* out, const ModelArch& arch, const std::string& prefix, int64_t d, int64_t heads) {
  const std::string attn = prefix + "attn.";
  Add(out, attn + "logit_scale", {heads, 1, 1});
  if (arch.qkv_bias) {
    Add(out, attn + "q_bias", {d});
    Add(out, attn + "v_bias", {d});
  }
  AddLinear(out, attn + "cpb_mlp.0.", 2, 512, true);
  AddLinear(out, attn + "cpb_mlp.2.", 512, heads, false);
  AddLinear(out, attn + "qkv.", d, 3 * d, false);
  AddLinear(out, attn + "proj.", d, d, true);
  AddNorm(out, prefix + "norm1.", d);
  AddMlp(out, prefix + "mlp.", d, Hidden(arch, d));
  AddNorm(out, prefix + "norm2.", d);
}

Params VitParameters(const ModelArch& arch) {
  const int64_t d = arch.embed_dim, grid = arch.img_size / arch.patch_size;
  Params out;
  if (arch.class_token) Add(&out, "cls_token", {1, 1, d});
  Add(&out, "pos_embed", {1, grid * grid + (arch.class_token ? 1 : 0), d});
  AddPatchEmbed(&out, arch, false);
  for (int b = 0; b < arch.depth; ++b) AddVitBlock(&out, arch, absl::StrCat("blocks.", b, "."), d);
  AddNorm(&out, arch.class_token ? "norm." : "fc_norm.", d);  // timm: fc_norm after average pooling.
  AddLinear(&out, "head.", d, arch.num_classes, true);
  return out;
}

Params SwinV2Parameters(const ModelArch& arch) {
  Params out;
  AddPatchEmbed(&out, arch, true);
  int64_t d = arch.embed_dim;
  for (size_t s = 0; s < arch.depths.size(); ++s) {
    const std::string stage = absl::StrCat("layers.", s, ".");
    if (s > 0) {  // PatchMerging at the start of every later stage: reduction 4d -> 2d, then norm(2d).
      AddLinear(&out, stage + "downsample.reduction.", 4 * d, 2 * d, false);
      d *= 2;
      AddNorm(&out, stage + "downsample.norm.", d);
    }
    for (int b = 0; b < arch.depths[s]; ++b) {
      AddSwinBlock(&out, arch, absl::StrCat(stage, "blocks.", b, "."), d, arch.stage_heads[s]);
    }
  }
  AddNorm(&out, "norm.", d);
  AddLinear(&out, "head.fc.", d, arch.num_classes, true);
  return out;
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

}  // namespace

int64_t LayerShape::numel() const { return Numel(shape); }

int64_t ParameterShape::numel() const { return Numel(shape); }

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

const ModelArch* FindModel(const std::string& name) {
  auto it = Catalog().find(name);
  return it == Catalog().end() ? nullptr : &it->second;
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

std::vector<ParameterShape> ModelParameters(const ModelArch& arch) {
  return arch.family == ModelFamily::kVit ? VitParameters(arch) : SwinV2Parameters(arch);
}

int64_t ParameterCount(const ModelArch& arch) {
  int64_t total = 0;
  for (const auto& p : ModelParameters(arch)) total += p.numel();
  return total;
}

}  // namespace nmsparse
