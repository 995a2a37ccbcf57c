// What `nmctl validate` prints: every sparsified layer of a run with its shape and the N:M it gets in each
// stage/phase of training, derived from the same tables the trainer uses (schemas/structure_decay.h).
#ifndef NMSPARSE_SCHEMAS_LAYER_PLAN_H_
#define NMSPARSE_SCHEMAS_LAYER_PLAN_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/experiment_config.h"

namespace nmsparse {

// One stretch of epochs [start_epoch, end_epoch) with one treatment.
struct LayerPlanStage {
  int start_epoch = 0;
  int end_epoch = 0;
  std::string phase;  // "dense", "sparse" or "fine_tune".
  NM nm{0, 0};        // {0, 0} when dense or unstructured.
  std::string text;   // e.g. "dense", "1:8", "1:8 hard", "SR-STE 2:4", "prune 50%".
};

struct LayerPlanRow {
  std::string name;  // timm parameter name.
  SparsityLocation location = SparsityLocation::kFF;
  std::vector<int64_t> shape;
  int64_t row_offset = 0;  // Q/K/V blocks of a fused qkv weight.
  std::vector<LayerPlanStage> stages;
  bool has_location = true;  // False for a parameter at no sparsity location (bias, norm, head, ...).
};

// Rows for every layer at the run's sparsity locations, in module order; empty for DENSE runs. The epoch
// timeline: dense epochs [0, d), the structure-decay stages, and the fine-tune window of epochs > T - f (hard
// mask, except SR-STE which keeps its recipe); or, with a phase list, its phases in order
// (phase i spans [int(T * sum of earlier fractions), int(T * sum up to i))). Dynamic sparsity runs (§7):
// every parameter of the model (ModelParameters), with "ALGORITHM sparsity (group g)" of the group that takes
// it, or "dense", over all epochs; InvalidArgument (AssignParamGroups) when a filter matches nothing.
absl::StatusOr<std::vector<LayerPlanRow>> DescribeLayerPlan(const ExperimentConfig& config);

// The linears the run's `semi_structured` section chooses for the 2:4 kernels, as `nmtrain --validate-only`
// prints them (FormatSemiStructuredChoices: a settings line, then "  NAME KIND [out, in]" per layer); empty
// when the section chooses none.
absl::StatusOr<std::string> DescribeSemiStructuredLayers(const ExperimentConfig& config);

// Epochs [start, end) of each entry of `s.phases` over `span` epochs (T) of a run of `total`: phase i spans
// [int(T * sum of earlier fractions), int(T * sum up to i)), the last one to the run's end; empty ones stay.
std::vector<std::pair<int, int>> PhaseEpochs(const SparsityConfig& s, int span, int total);

// The epoch timeline every row of DescribeLayerPlan gets for an N:M `target` of a run with the N:M engine.
std::vector<LayerPlanStage> RunTimeline(const ExperimentConfig& config, NM target);

// A fixed-width text table of the rows, one line per layer: name, location, shape, then "epochs a-b: text".
std::string FormatLayerPlan(const std::vector<LayerPlanRow>& rows);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_LAYER_PLAN_H_
