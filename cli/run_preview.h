// What a run will do, as `nmctl validate` shows it before anything is submitted (issue 40, item 4): the
// optimizer with its resolved learning rate (after a reference config's lr_base scaling) and the batch, the
// optimizer steps per epoch and in all, the learning-rate schedule, the sparsity phases and the decay D at
// the last step; and the layer plan with identical layers collapsed into one line with a count.
#ifndef NMSPARSE_CLI_RUN_PREVIEW_H_
#define NMSPARSE_CLI_RUN_PREVIEW_H_

#include <string>
#include <vector>

#include "schemas/experiment_config.h"
#include "schemas/layer_plan.h"

namespace nmsparse::cli {

// Indented lines, one fact each:
//   optimizer adamw: lr 0.002 (as trained: after lr_base scaling), weight_decay 0.05; batch 50 x 1 step(s) of
//     accumulation over 1 rank(s)
//   steps: 8 per epoch (400 images), 16 in all (2 epochs)
//   schedule warmup_cosine: warm-up 0 epoch(s) from 1e-06, then cosine to min_lr 1e-06
//   phases: epochs 1-2 sparse (MDGF 1:8)
//   D at the last step: 0.92 (decay_type EXP, decay_coef 0.0002, step 16 of the sparse phase)
std::string DescribeTraining(const ExperimentConfig& config);

// The layer plan with rows that differ only in a block index collapsed into one line
// ("blocks.{0-11}.mlp.fc1.weight (12 layers)"): same location, shape and epoch timeline.
std::string FormatCollapsedLayerPlan(const std::vector<LayerPlanRow>& rows);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_RUN_PREVIEW_H_
