#include "schemas/model_flops.h"

#include <algorithm>

#include "schemas/model_geometry.h"

namespace nmsparse {
namespace {

bool IsQkv(SparsityLocation location) {
  return location == SparsityLocation::kQ || location == SparsityLocation::kK ||
         location == SparsityLocation::kV;
}

// 2 FLOPs per multiply-add of `rows` rows against `macs_per_row` weights or activations.
double MatMulFlops(int64_t rows, int64_t macs_per_row) {
  return 2.0 * static_cast<double>(rows) * static_cast<double>(macs_per_row);
}

// The forward FLOPs not computed when the weights at `locations` run at `density`.
double SkippedForwardFlops(const ModelArch& arch, const std::vector<SparsityLocation>& locations,
                           const GemmDensity& density) {
  double skipped = 0.0;
  for (const MatMul& m : Geometry(arch).matmuls) {
    const int64_t blocks = static_cast<int64_t>(m.locations.size());
    for (SparsityLocation location : m.locations) {
      if (std::find(locations.begin(), locations.end(), location) == locations.end()) continue;
      const double share = IsQkv(location) ? density.qkv : density.ff;
      skipped += (1.0 - share) * MatMulFlops(m.rows, m.macs_per_row / blocks);
    }
  }
  return skipped;
}

}  // namespace

double ForwardFlops(const ModelArch& arch) {
  double flops = 0.0;
  for (const MatMul& m : Geometry(arch).matmuls) flops += MatMulFlops(m.rows, m.macs_per_row);
  return flops;
}

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
  const GemmDensity weight_gradient{density.weight_gradient, density.weight_gradient};
  return 3.0 * ForwardFlops(arch) - 2.0 * SkippedForwardFlops(arch, locations, density) -
         SkippedForwardFlops(arch, locations, weight_gradient);
}

double TrainingFlopsPerImageByParameter(const ModelArch& arch,
                                        const std::vector<ParameterDensity>& densities) {
  double flops = 0.0;
  for (const MatMul& m : Geometry(arch).matmuls) {
    const double dense = MatMulFlops(m.rows, m.macs_per_row);
    auto it = std::find_if(densities.begin(), densities.end(),
                           [&](const ParameterDensity& d) { return d.name == m.name; });
    flops += it == densities.end() ? 3.0 * dense : (2.0 * it->forward + it->weight_gradient) * dense;
  }
  return flops;
}

}  // namespace nmsparse
