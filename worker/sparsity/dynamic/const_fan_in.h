// SRigL's mask arithmetic (Lasby et al., ICLR 2024; docs/sparsity-method.md §7.1): RigL with a constant
// fan-in, every active output neuron (row) of a weight keeps exactly k non-zeros anywhere in its row, and
// neurons whose weights are not salient enough are ablated (their row is all zero). This is not M-grouped
// N:M: the k survivors of a row may sit in any columns. Rows are dim 0; a conv's remaining dimensions are its
// columns. Follows calgaryml/condensed-sparsity@3052bb8b, src/rigl_torch/rigl_constant_fan.py.
#ifndef NMSPARSE_WORKER_SPARSITY_DYNAMIC_CONST_FAN_IN_H_
#define NMSPARSE_WORKER_SPARSITY_DYNAMIC_CONST_FAN_IN_H_

#include <torch/torch.h>

#include <cstdint>

#include "schemas/step_schedule.h"

namespace nmsparse {
namespace dynamic {

// The weights a layer of `numel` weights at `sparsity` may keep: int(numel * (1 - sparsity)), as the authors
// round it. Their constant fan-in over `active_rows` rows is this // active_rows.
int64_t ConstFanInBudget(int64_t numel, double sparsity);
int64_t ConstFanIn(int64_t numel, double sparsity, int64_t active_rows);

// The authors' random initial mask: every row keeps cols - int(cols * sparsity) columns chosen at random.
torch::Tensor InitialConstFanInMask(const torch::Tensor& weight, double sparsity, uint64_t seed);

// The authors' counters (rigl_scheduler.py): the scheduler runs after every optimizer.step() and counts
// steps from 1 (`step1` = the 0-based optimizer step + 1); it updates when step1 % freq == 0 and
// step1 < t_end, and the dense gradient it scores growth with is the mean over the `accumulate` optimizer
// steps up to and including an update step (step1 in (u - accumulate, u] for an update u).
bool SriglUpdatesAt(int64_t step1, int64_t freq, int64_t t_end);
bool SriglAccumulatesAt(int64_t step1, int64_t freq, int64_t accumulate, int64_t t_end);

// The authors' drop fraction alpha / 2 * (1 + cos(pi * step1 / t_end)): a cosine schedule read at step1.
StepSchedule SriglDropFraction(double alpha, int64_t t_end);

struct ConstFanInUpdate {
  double sparsity = 0.0;
  double drop_fraction = 0.0;  // At this update: alpha / 2 * (1 + cos(pi * step / T_end)) by default.
  bool ablation = true;        // dynamic_ablation, and the layer is not in no_ablation_filter.
  double min_salient_weights_per_neuron = 0.95;
};

// One SRigL update of `mask` (same shape as `weight`, 1 = active) from |W| and the averaged dense gradient:
//  n_prune = int(n_ones * drop_fraction), n_keep = min(n_ones - n_prune, nonzero weights);
//  ablation: salient = top n_keep |W| or top n_prune |grad| in the layer; a row is ablated when its salient
//    count is below max(1, int(min_salient * k_before)), that threshold lowered to the count of the row at
//    position int(budget / cols) in descending order so that this many + 1 rows survive;
//  k = budget // (rows - ablated);
//  drop: the layer's top n_keep |W| outside ablated rows, then each row holding more than k survivors keeps
//    its first k by column index (the authors sort the boolean row mask, which on CPU keeps the lowest
//    columns; the largest weight of an over-full row may go);
//  grow: in each surviving row, the k - kept largest |grad| among the positions not kept.
// Ties go to the lowest index. Everything stays on the weight's device: no host read.
torch::Tensor ConstFanInDropAndGrow(const torch::Tensor& weight, const torch::Tensor& mask,
                                    const torch::Tensor& dense_grad, const ConstFanInUpdate& update);

}  // namespace dynamic
}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_DYNAMIC_CONST_FAN_IN_H_
