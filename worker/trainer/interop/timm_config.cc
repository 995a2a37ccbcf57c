#include "worker/trainer/interop/timm_config.h"

#include <vector>

#include "absl/strings/match.h"

namespace nmsparse {
namespace {

using nlohmann::json;

// The geometry every family shares, then each family's own keys, as timm's constructors name them.
json ModelArgs(const ModelArch& arch) {
  json args = {{"img_size", arch.img_size},   {"patch_size", arch.patch_size},
               {"in_chans", arch.in_chans},   {"num_classes", arch.num_classes},
               {"embed_dim", arch.embed_dim}, {"mlp_ratio", arch.mlp_ratio},
               {"qkv_bias", arch.qkv_bias}};
  if (arch.family == ModelFamily::kVit) {
    args["depth"] = arch.depth;
    args["num_heads"] = arch.num_heads;
    args["class_token"] = arch.class_token;
    args["global_pool"] = TimmGlobalPool(arch);
  } else {
    args["depths"] = arch.depths;
    args["num_heads"] = arch.stage_heads;
    args["window_size"] = arch.window_size;
    bool pretrained_windows = false;
    for (int w : arch.pretrained_window_sizes) pretrained_windows = pretrained_windows || w > 0;
    if (pretrained_windows) args["pretrained_window_sizes"] = arch.pretrained_window_sizes;
  }
  return args;
}

}  // namespace

std::string TimmArchitecture(const ModelArch& arch) {
  // nmsparse's own entries are the 28x28 grey ones (schemas/model_catalog.cc).
  if (!absl::EndsWith(arch.name, "_28")) return arch.name;
  return arch.family == ModelFamily::kVit ? "vit_tiny_patch16_224" : "swinv2_tiny_window8_256";
}

std::string TimmGlobalPool(const ModelArch& arch) {
  return arch.family == ModelFamily::kVit && arch.class_token ? "token" : "avg";
}

int TimmNumFeatures(const ModelArch& arch) {
  if (arch.family == ModelFamily::kVit) return arch.embed_dim;
  return arch.embed_dim << (arch.depths.empty() ? 0 : arch.depths.size() - 1);
}

json TimmConfigJson(const ModelArch& arch, const DataPipeline& eval) {
  const json pretrained_cfg = {
      {"input_size", {arch.in_chans, eval.img_size, eval.img_size}},
      {"fixed_input_size", true},
      {"interpolation", eval.interpolation},
      {"crop_pct", eval.crop_pct},
      {"crop_mode", "center"},
      {"mean", eval.mean},
      {"std", eval.std},
      {"num_classes", arch.num_classes},
      {"first_conv", "patch_embed.proj"},
      {"classifier", arch.family == ModelFamily::kVit ? "head" : "head.fc"},
  };
  return {{"architecture", TimmArchitecture(arch)}, {"num_classes", arch.num_classes},
          {"num_features", TimmNumFeatures(arch)},  {"global_pool", TimmGlobalPool(arch)},
          {"model_args", ModelArgs(arch)},          {"pretrained_cfg", pretrained_cfg}};
}

}  // namespace nmsparse
