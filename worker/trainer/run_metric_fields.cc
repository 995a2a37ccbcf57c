#include "worker/trainer/run_metric_fields.h"

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

void AddSemiStructuredFields(const SemiStructuredLayers* semi, MetricLine& line) {
  if (semi == nullptr) return;
  for (const auto& layer : semi->Report()) {
    line.Add(contract::kSemiStructuredLabelPrefix + layer.name, FormatSemiStructuredReport(layer));
    line.Add(contract::kSpeedup24ValuePrefix + layer.name, layer.path.speedup);
  }
}

}  // namespace nmsparse
