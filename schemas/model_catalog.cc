#include "schemas/model_catalog.h"

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

}  // namespace

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

}  // namespace nmsparse
