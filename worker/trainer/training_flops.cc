#include "worker/trainer/training_flops.h"

#include "absl/strings/match.h"
#include "worker/trainer/flops.h"

namespace nmsparse {
namespace {

bool IsQkv(SparsityLocation location) {
  return location == SparsityLocation::kQ || location == SparsityLocation::kK ||
         location == SparsityLocation::kV;
}

// Tokens a layer's GEMM runs over per image: the patches for the patch embedding; for ViT blocks the patches
// and class token; for SwinV2 blocks the patches of their stage ("layers.<s>.", halved per stage).
double TokensOf(const ModelArch& arch, const LayerShape& layer) {
  const double grid = arch.img_size / arch.patch_size;
  if (layer.location == SparsityLocation::kC) return grid * grid;
  if (arch.family == ModelFamily::kVit) return grid * grid + (arch.class_token ? 1 : 0);
  const int stage = absl::StartsWith(layer.name, "layers.") ? layer.name[7] - '0' : 0;
  const double res = static_cast<double>(static_cast<int64_t>(grid) >> stage);
  return res * res;
}

double SkippedForwardFlops(const ModelArch& arch, const std::vector<SparsityLocation>& locations,
                           const GemmDensity& density) {
  double skipped = 0.0;
  for (const LayerShape& layer : SparsifiableLayers(arch, locations)) {
    const double share = IsQkv(layer.location) ? density.qkv : density.ff;
    skipped += (1.0 - share) * 2.0 * TokensOf(arch, layer) * layer.numel();
  }
  return skipped;
}

}  // namespace

GemmDensity FinalDensity(const SparsityConfig& config) {
  if (config.sparsity_type == SparsityType::kDense || config.IsDynamic()) return {};
  if (config.sparsity_type == SparsityType::kUnstructured)
    return {1.0 - config.prune_rate, 1.0 - config.prune_rate};
  const auto share = [](const NM& nm) { return static_cast<double>(nm.n) / nm.m; };
  return {share(config.nm), share(config.nm_qkv)};
}

double SparsifiableForwardFlops(const ModelArch& arch, const std::vector<SparsityLocation>& locations) {
  return SkippedForwardFlops(arch, locations, GemmDensity{0.0, 0.0});
}

double ForwardFlopsAt(const ModelArch& arch, const std::vector<SparsityLocation>& locations,
                      const GemmDensity& density) {
  return ForwardFlops(arch) - SkippedForwardFlops(arch, locations, density);
}

double TrainingFlopsPerImageAt(const ModelArch& arch, const std::vector<SparsityLocation>& locations,
                               const GemmDensity& density) {
  return 3.0 * ForwardFlops(arch) - 2.0 * SkippedForwardFlops(arch, locations, density);
}

}  // namespace nmsparse
