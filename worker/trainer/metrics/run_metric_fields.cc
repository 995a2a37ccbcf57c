#include "worker/trainer/metrics/run_metric_fields.h"

#include <cmath>
#include <map>
#include <string>

#include "contract/metric_names.h"

namespace nmsparse {

int64_t CountParameters(torch::nn::Module& model) {
  int64_t count = 0;
  for (const auto& p : model.parameters()) count += p.numel();
  return count;
}

void AddSparsityFields(const SparsityReport& report, MetricLine& line) {
  for (const auto& [key, label] : report.labels) line.Add(key, label);
  for (const auto& [key, number] : report.numbers) line.Add(key, number);
}

namespace {

struct DiagnosticsSums {
  double compared = 0.0;  // Mask entries with a previous mask to compare with.
  double flipped = 0.0;
  double pruned_grad_sq = 0.0;
  double kept_grad_sq = 0.0;

  void Add(const LayerDiagnostics& layer) {
    if (layer.flipped >= 0) {
      compared += static_cast<double>(layer.numel);
      flipped += layer.flipped;
    }
    pruned_grad_sq += layer.pruned_grad_sq;
    kept_grad_sq += layer.kept_grad_sq;
  }

  void AddTo(const std::string& suffix, MetricLine& line) const {
    if (compared > 0) line.Add(contract::kFlipRate + suffix, flipped / compared);
    line.Add(contract::kGradNormPruned + suffix, std::sqrt(pruned_grad_sq));
    line.Add(contract::kGradNormKept + suffix, std::sqrt(kept_grad_sq));
  }
};

}  // namespace

void AddDiagnosticsFields(const std::vector<LayerDiagnostics>& layers, MetricLine& line) {
  if (layers.empty()) return;
  DiagnosticsSums all;
  std::map<std::string, DiagnosticsSums> by_kind;
  for (const LayerDiagnostics& layer : layers) {
    all.Add(layer);
    by_kind[layer.kind].Add(layer);
  }
  all.AddTo("", line);
  for (const auto& [kind, sums] : by_kind) sums.AddTo("/" + kind, line);
}

void AddSemiStructuredFields(const SemiStructuredLayers* semi, MetricLine& line) {
  if (semi == nullptr) return;
  for (const auto& layer : semi->Report()) {
    line.Add(contract::kSemiStructuredLabelPrefix + layer.name, FormatSemiStructuredReport(layer));
    line.Add(contract::kSpeedup24ValuePrefix + layer.name, layer.path.speedup);
  }
}

}  // namespace nmsparse
