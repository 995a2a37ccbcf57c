#include "schemas/model_resolution.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "schemas/limits.h"

namespace nmsparse {
namespace {

absl::Status Invalid(const std::string& key, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat("model.", key, ": ", reason));
}

bool IsVit(const ModelArch& arch) { return arch.family == ModelFamily::kVit; }

// A key of the other family, given: an error naming it.
absl::Status CheckFamilyKeys(const ModelConfig& m, const ModelArch& arch) {
  const std::string family = IsVit(arch) ? "a ViT" : "a SwinV2";
  auto not_for = [&](const std::string& key, const std::string& hint) {
    return Invalid(key, absl::StrCat(arch.name, " is ", family, ", which has no ", key, hint));
  };
  if (IsVit(arch)) {
    if (!m.depths.empty()) return not_for("depths", " (ViT: depth)");
    if (m.window_size > 0) return not_for("window_size", "");
    if (!m.pretrained_window_sizes.empty()) return not_for("pretrained_window_sizes", "");
    if (m.num_heads.size() > 1) {
      return Invalid("num_heads", "a ViT takes one number of heads, not a list per stage");
    }
    return absl::OkStatus();
  }
  if (m.depth > 0) return not_for("depth", " (SwinV2: depths, one per stage)");
  if (m.class_token.value_or(false)) return not_for("class_token", "");
  if (m.global_pool == "token") return not_for("global_pool token", " (SwinV2 pools by avg)");
  return absl::OkStatus();
}

absl::Status CheckVit(const ModelConfig& m, const ModelArch& arch) {
  if (arch.embed_dim % arch.num_heads != 0) {
    return Invalid("embed_dim", absl::StrCat("value ", arch.embed_dim, " is not a multiple of num_heads (",
                                             arch.num_heads, ")"));
  }
  if (!m.global_pool.empty() && (m.global_pool == "token") != arch.class_token) {
    return Invalid("global_pool", absl::StrCat("value ", m.global_pool, " needs class_token: ",
                                               m.global_pool == "token" ? "true" : "false"));
  }
  return absl::OkStatus();
}

// timm's SwinTransformerV2: stage i works on a grid of img/patch/2^i tokens, each later stage halving it by
// 2x2 patch merging; a window larger than a stage's grid is clamped to it, and nmsparse (like the
// reference) needs the window to tile the grid.
absl::Status CheckSwin(const ModelConfig& m, const ModelArch& arch) {
  if (arch.stage_heads.size() != arch.depths.size()) {
    return Invalid("num_heads", absl::StrCat("has ", arch.stage_heads.size(), " entries for ",
                                             arch.depths.size(), " stages (depths): one per stage"));
  }
  if (!arch.pretrained_window_sizes.empty() && arch.pretrained_window_sizes.size() != arch.depths.size()) {
    return Invalid("pretrained_window_sizes",
                   absl::StrCat("has ", arch.pretrained_window_sizes.size(), " entries for ",
                                arch.depths.size(), " stages (depths): one per stage"));
  }
  const std::string key = m.window_size > 0 ? "window_size" : "img_size";
  int res = arch.img_size / arch.patch_size;
  for (size_t s = 0; s < arch.depths.size(); ++s, res /= 2) {
    const int window = std::min(arch.window_size, res);
    if (res == 0 || res % window != 0 || (s + 1 < arch.depths.size() && res % 2 != 0)) {
      return Invalid(
          key, absl::StrCat("value ", key == "img_size" ? arch.img_size : arch.window_size, " gives a ", res,
                            "x", res, " token grid at stage ", s, " of ", arch.name, ", which window ",
                            window, " and the 2x2 patch merging cannot tile"));
    }
  }
  int64_t dim = arch.embed_dim;
  for (size_t s = 0; s < arch.depths.size(); ++s, dim *= 2) {
    if (dim > limits::kMaxModelWidth) {
      return Invalid("embed_dim",
                     absl::StrCat("value ", arch.embed_dim, " gives width ", dim, " at stage ", s,
                                  ", over the limit of ", limits::kMaxModelWidth, " (schemas/limits.h)"));
    }
    if (dim % arch.stage_heads[s] != 0) {
      return Invalid("embed_dim",
                     absl::StrCat("value ", arch.embed_dim, " gives width ", dim, " at stage ", s,
                                  ", not a multiple of its num_heads (", arch.stage_heads[s], ")"));
    }
  }
  return absl::OkStatus();
}

// Bounds checked before anything counts parameters (which lists them) or multiplies sizes.
absl::Status CheckShapeBounds(const ModelArch& arch) {
  if (arch.embed_dim > limits::kMaxModelWidth) {
    return Invalid("embed_dim", absl::StrCat("value ", arch.embed_dim, " is over the limit of ",
                                             limits::kMaxModelWidth, " (schemas/limits.h)"));
  }
  int64_t blocks = IsVit(arch) ? arch.depth : 0;
  for (int d : arch.depths) blocks += d;
  if (blocks > limits::kMaxModelBlocks) {
    return Invalid(IsVit(arch) ? "depth" : "depths",
                   absl::StrCat(blocks, " blocks are over the limit of ", limits::kMaxModelBlocks,
                                " (schemas/limits.h)"));
  }
  const int64_t grid = arch.img_size / arch.patch_size;
  if (grid * grid > limits::kMaxModelTokens) {
    return Invalid("img_size", absl::StrCat("value ", arch.img_size, " with patch size ", arch.patch_size,
                                            " gives ", grid * grid, " patch tokens, over the limit of ",
                                            limits::kMaxModelTokens, " (schemas/limits.h)"));
  }
  return absl::OkStatus();
}

absl::Status CheckSize(const ModelArch& arch) {
  const int64_t params = ParameterCount(arch);
  if (params > limits::kMaxModelParameters) {
    return absl::InvalidArgumentError(
        absl::StrCat("model: ", limits::FormatCount(params), " parameters exceed the limit of ",
                     limits::FormatCount(limits::kMaxModelParameters), " (schemas/limits.h)"));
  }
  const double flops = ForwardFlopsBound(arch);
  if (flops > static_cast<double>(limits::kMaxModelFlopsPerImage)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model: at most %.3g FLOPs per image (2 x parameters x tokens + attention) exceed the limit of %.3g "
        "(schemas/limits.h)",
        flops, static_cast<double>(limits::kMaxModelFlopsPerImage)));
  }
  return absl::OkStatus();
}

}  // namespace

// Every weight is used at most once per token of the first stage (SwinV2's later stages see fewer tokens),
// the class token included: 2 x parameters x (tokens + 1) bounds every matmul with a weight. Attention's two
// matmuls per block cost 4 x tokens x attended tokens x width; SwinV2's stages halve their grid while
// doubling the width, so the first stage's tokens x width bounds each later one's.
double ForwardFlopsBound(const ModelArch& arch) {
  const double grid = static_cast<double>(arch.img_size / arch.patch_size);
  const double tokens = grid * grid + 1.0;
  const double window = std::min<double>(arch.window_size, grid);
  const double attended = IsVit(arch) ? tokens : window * window;
  double blocks = IsVit(arch) ? arch.depth : 0;
  for (int d : arch.depths) blocks += d;
  return 2.0 * static_cast<double>(ParameterCount(arch)) * tokens +
         4.0 * blocks * tokens * attended * arch.embed_dim;
}

absl::StatusOr<ModelArch> ResolveModel(const ModelConfig& m) {
  auto arch = LookupModel(m.name, m.img_size, m.in_chans, m.num_classes);
  if (!arch.ok()) return arch.status();
  ModelArch& a = *arch;
  if (m.patch_size > 0) a.patch_size = m.patch_size;
  if (m.embed_dim > 0) a.embed_dim = m.embed_dim;
  if (m.mlp_ratio > 0) a.mlp_ratio = m.mlp_ratio;
  if (m.qkv_bias.has_value()) a.qkv_bias = *m.qkv_bias;
  if (IsVit(a)) {
    if (m.depth > 0) a.depth = m.depth;
    if (m.num_heads.size() == 1) a.num_heads = m.num_heads[0];
    if (m.class_token.has_value()) a.class_token = *m.class_token;
  } else {
    if (!m.depths.empty()) a.depths = m.depths;
    if (!m.num_heads.empty()) a.stage_heads = m.num_heads;
    if (m.window_size > 0) a.window_size = m.window_size;
    if (!m.pretrained_window_sizes.empty()) a.pretrained_window_sizes = m.pretrained_window_sizes;
  }
  return arch;
}

absl::Status ValidateModelArch(const ModelConfig& m, const ModelArch& arch) {
  if (absl::Status st = CheckFamilyKeys(m, arch); !st.ok()) return st;
  if (arch.img_size % arch.patch_size != 0) {
    if (m.patch_size > 0) {
      return Invalid("patch_size", absl::StrCat("value ", arch.patch_size, " does not divide the image size ",
                                                arch.img_size, " of ", arch.name));
    }
    return Invalid("img_size", absl::StrCat("value ", arch.img_size, " is not a multiple of the patch size ",
                                            arch.patch_size, " of ", arch.name));
  }
  if (absl::Status st = CheckShapeBounds(arch); !st.ok()) return st;
  if (absl::Status st = IsVit(arch) ? CheckVit(m, arch) : CheckSwin(m, arch); !st.ok()) return st;
  return CheckSize(arch);
}

}  // namespace nmsparse
