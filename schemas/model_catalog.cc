#include "schemas/model_catalog.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/did_you_mean.h"

namespace nmsparse {
namespace {

// A named argument of a registration, as LibTorch's TORCH_ARG writes one (schemas/ does not include
// LibTorch).
#define CATALOG_ARG(T, name)                        \
 public:                                            \
  auto name(const T& new_##name)->decltype(*this) { \
    name##_ = new_##name;                           \
    return *this;                                   \
  }                                                 \
  const T& name() const { return name##_; }         \
                                                    \
 private:                                           \
  T name##_

// The model_args of a registered VisionTransformer, named as timm names them; defaults: ViT-B/16 at 224.
class VitArgs {
  CATALOG_ARG(int, img_size) = 224;
  CATALOG_ARG(int, patch_size) = 16;
  CATALOG_ARG(int, in_chans) = 3;
  CATALOG_ARG(int, num_classes) = 1000;
  CATALOG_ARG(int, embed_dim) = 768;
  CATALOG_ARG(int, depth) = 12;
  CATALOG_ARG(int, num_heads) = 12;
};

// The model_args of a registered SwinTransformerV2, named as timm names them, and its cfg's crop_pct;
// defaults: SwinV2-T, window 8 at 256.
class SwinV2Args {
  CATALOG_ARG(int, img_size) = 256;
  CATALOG_ARG(int, patch_size) = 4;
  CATALOG_ARG(int, in_chans) = 3;
  CATALOG_ARG(int, num_classes) = 1000;
  CATALOG_ARG(int, embed_dim) = 96;
  CATALOG_ARG(std::vector<int>, depths) = std::vector<int>{2, 2, 6, 2};
  CATALOG_ARG(std::vector<int>, num_heads) = std::vector<int>{3, 6, 12, 24};
  CATALOG_ARG(int, window_size) = 8;
  // The window the weights were pre-trained with, one per stage, which scales the continuous position bias's
  // relative coordinates instead of the window (timm's fine-tune variants); empty: none.
  CATALOG_ARG(std::vector<int>, pretrained_window_sizes);
  CATALOG_ARG(double, crop_pct) = 0.9;
};

#undef CATALOG_ARG

ModelArch Arch(const std::string& name, const VitArgs& args) {
  ModelArch a;
  a.name = name;
  a.family = ModelFamily::kVit;
  a.img_size = args.img_size();
  a.patch_size = args.patch_size();
  a.in_chans = args.in_chans();
  a.num_classes = args.num_classes();
  a.embed_dim = args.embed_dim();
  a.depth = args.depth();
  a.num_heads = args.num_heads();
  a.class_token = true;
  return a;
}

ModelArch Arch(const std::string& name, const SwinV2Args& args) {
  ModelArch a;
  a.name = name;
  a.family = ModelFamily::kSwinV2;
  a.img_size = args.img_size();
  a.patch_size = args.patch_size();
  a.in_chans = args.in_chans();
  a.num_classes = args.num_classes();
  a.embed_dim = args.embed_dim();
  a.depth = 0;
  a.num_heads = 0;
  a.depths = args.depths();
  a.stage_heads = args.num_heads();
  a.window_size = args.window_size();
  a.pretrained_window_sizes = args.pretrained_window_sizes();
  a.class_token = false;
  a.crop_pct = args.crop_pct();
  a.mean = {0.485, 0.456, 0.406};  // timm's IMAGENET_DEFAULT_MEAN and _STD.
  a.std = {0.229, 0.224, 0.225};
  return a;
}

// The 28x28 grey models are nmsparse's, not timm's: evaluate the whole image, normalised to [-1, 1].
ModelArch Grey(ModelArch a) {
  a.crop_pct = 1.0;
  a.mean = {0.5};
  a.std = {0.5};
  return a;
}

const std::map<std::string, ModelArch>& Catalog() {
  static const auto* catalog = [] {
    auto* m = new std::map<std::string, ModelArch>;
    auto add = [m](const std::string& name, const auto& args) { (*m)[name] = Arch(name, args); };
    add("vit_tiny_patch16_224", VitArgs().patch_size(16).embed_dim(192).depth(12).num_heads(3));
    add("vit_small_patch16_224", VitArgs().patch_size(16).embed_dim(384).depth(12).num_heads(6));
    add("vit_base_patch16_224", VitArgs().patch_size(16).embed_dim(768).depth(12).num_heads(12));
    add("vit_large_patch16_224", VitArgs().patch_size(16).embed_dim(1024).depth(24).num_heads(16));
    // Small variants for 28x28 grey-scale 10-class data (Fashion-MNIST): nano for tests, micro for demos.
    const auto grey28 = VitArgs().img_size(28).in_chans(1).num_classes(10);
    add("vit_nano_patch7_28", VitArgs(grey28).patch_size(7).embed_dim(32).depth(2).num_heads(2));
    add("vit_micro_patch4_28", VitArgs(grey28).patch_size(4).embed_dim(64).depth(4).num_heads(4));
    // SwinV2 as timm registers it: model_args per model, the input size from the name (timm's cfg).
    const std::vector<int> d6 = {2, 2, 6, 2}, d18 = {2, 2, 18, 2};
    const std::vector<int> h3 = {3, 6, 12, 24}, h4 = {4, 8, 16, 32}, h6 = {6, 12, 24, 48};
    add("swinv2_tiny_window8_256", SwinV2Args().window_size(8).embed_dim(96).depths(d6).num_heads(h3));
    add("swinv2_small_window8_256", SwinV2Args().window_size(8).embed_dim(96).depths(d18).num_heads(h3));
    add("swinv2_base_window8_256", SwinV2Args().window_size(8).embed_dim(128).depths(d18).num_heads(h4));
    add("swinv2_tiny_window16_256", SwinV2Args().window_size(16).embed_dim(96).depths(d6).num_heads(h3));
    add("swinv2_small_window16_256", SwinV2Args().window_size(16).embed_dim(96).depths(d18).num_heads(h3));
    add("swinv2_base_window16_256", SwinV2Args().window_size(16).embed_dim(128).depths(d18).num_heads(h4));
    // timm's window-12 models at 192 default to their ImageNet-22k head (21841 classes).
    const auto at192 = SwinV2Args().img_size(192).num_classes(21841);
    add("swinv2_base_window12_192",
        SwinV2Args(at192).window_size(12).embed_dim(128).depths(d18).num_heads(h4));
    add("swinv2_large_window12_192",
        SwinV2Args(at192).window_size(12).embed_dim(192).depths(d18).num_heads(h6));
    // timm's ImageNet-1k fine-tunes of the window-12 models: their position bias still scales the relative
    // coordinates by the pre-training window, 12 (6 in the last stage, whose 6x6 grid clamped the window);
    // timm's cfg: crop_pct 1.0 at 384.
    const std::vector<int> w12 = {12, 12, 12, 6};
    const auto at384 = SwinV2Args().img_size(384).crop_pct(1.0);
    add("swinv2_base_window12to16_192to256",
        SwinV2Args().window_size(16).embed_dim(128).depths(d18).num_heads(h4).pretrained_window_sizes(w12));
    add("swinv2_base_window12to24_192to384",
        SwinV2Args(at384).window_size(24).embed_dim(128).depths(d18).num_heads(h4).pretrained_window_sizes(
            w12));
    add("swinv2_large_window12to16_192to256",
        SwinV2Args().window_size(16).embed_dim(192).depths(d18).num_heads(h6).pretrained_window_sizes(w12));
    add("swinv2_large_window12to24_192to384",
        SwinV2Args(at384).window_size(24).embed_dim(192).depths(d18).num_heads(h6).pretrained_window_sizes(
            w12));
    add("swinv2_micro_window7_28", SwinV2Args()
                                       .img_size(28)
                                       .in_chans(1)
                                       .num_classes(10)
                                       .patch_size(2)
                                       .window_size(7)
                                       .embed_dim(32)
                                       .depths({2, 2})
                                       .num_heads({2, 4}));
    for (const char* name : {"vit_nano_patch7_28", "vit_micro_patch4_28", "swinv2_micro_window7_28"}) {
      m->at(name) = Grey(m->at(name));
    }
    return m;
  }();
  return *catalog;
}

}  // namespace

absl::StatusOr<ModelArch> LookupModel(const std::string& name, int img_size, int in_chans, int num_classes) {
  const auto& catalog = Catalog();
  auto it = catalog.find(CatalogName(name));
  if (it == catalog.end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name, "'",
                                            DidYouMean(name, AcceptedModelNames()),
                                            "; known models: ", absl::StrJoin(ModelNames(), ", ")));
  }
  ModelArch arch = it->second;
  if (img_size > 0) arch.img_size = img_size;
  if (in_chans > 0) arch.in_chans = in_chans;
  if (num_classes > 0) arch.num_classes = num_classes;
  return arch;
}

const ModelArch* FindModel(const std::string& name) {
  auto it = Catalog().find(CatalogName(name));
  return it == Catalog().end() ? nullptr : &it->second;
}

const std::map<std::string, std::string>& ModelAliases() {
  static const auto* aliases = new std::map<std::string, std::string>{
      {"deit_base_patch16_224", "vit_base_patch16_224"},
      {"deit_small_patch16_224", "vit_small_patch16_224"},
      {"deit_tiny_patch16_224", "vit_tiny_patch16_224"},
  };
  return *aliases;
}

std::string CatalogName(const std::string& name) {
  if (Catalog().count(name) > 0) return name;
  auto alias = ModelAliases().find(name);
  return alias == ModelAliases().end() ? "" : alias->second;
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const auto& [name, arch] : Catalog()) names.push_back(name);
  return names;
}

std::vector<std::string> AcceptedModelNames() {
  std::vector<std::string> names = ModelNames();
  for (const auto& [alias, entry] : ModelAliases()) names.push_back(alias);
  return names;
}

}  // namespace nmsparse
