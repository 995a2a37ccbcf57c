// What a run adds to its metric lines beyond loss and accuracy: its parameter count, the sparsity method's
// labels and numbers, and each accelerated 2:4 layer's path and speed-up (contract/metric_names.h).
#ifndef NMSPARSE_WORKER_TRAINER_METRICS_RUN_METRIC_FIELDS_H_
#define NMSPARSE_WORKER_TRAINER_METRICS_RUN_METRIC_FIELDS_H_

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "worker/sparsity/semi_structured/semi_structured_layers_setup.h"
#include "worker/sparsity/sparsity_diagnostics.h"
#include "worker/sparsity/sparsity_method.h"
#include "worker/trainer/metrics/metrics_writer.h"

namespace nmsparse {

int64_t CountParameters(torch::nn::Module& model);

void AddSparsityFields(const SparsityReport& report, MetricLine& line);

// flip_rate, grad_norm_pruned and grad_norm_kept over all `layers` and per layer kind (flip_rate/ff, ...);
// no flip rate where no layer had a previous mask; nothing when `layers` is empty.
void AddDiagnosticsFields(const std::vector<LayerDiagnostics>& layers, MetricLine& line);

// semi_structured/<layer>: the path the layer's last forward took and why; speedup_2_4/<layer>: timed
// dense / 2:4 GPU time of its GEMM, 0 when not timed. Nothing when `semi` is null.
void AddSemiStructuredFields(const SemiStructuredLayers* semi, MetricLine& line);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_METRICS_RUN_METRIC_FIELDS_H_
