#include "worker/sparsity/dynamic/const_fan_in.h"

#include <algorithm>
#include <cmath>

#include "worker/sparsity/dynamic/dynamic_mask.h"

namespace nmsparse {
namespace dynamic {
namespace {

int64_t Rows(const torch::Tensor& t) { return t.dim() == 0 ? 1 : t.size(0); }

// 1 where an element of the whole tensor is among its `k` largest (a device tensor), in `t`'s shape.
torch::Tensor TopKOfLayer(const torch::Tensor& scores, const torch::Tensor& k) {
  return RanksBelow(scores.reshape({1, -1}), k).reshape(scores.sizes()).gt(0);
}

}  // namespace

int64_t ConstFanInBudget(int64_t numel, double sparsity) {
  return static_cast<int64_t>(static_cast<double>(numel) * (1.0 - std::clamp(sparsity, 0.0, 1.0)));
}

int64_t ConstFanIn(int64_t numel, double sparsity, int64_t active_rows) {
  return active_rows <= 0 ? 0 : ConstFanInBudget(numel, sparsity) / active_rows;
}

bool SriglUpdatesAt(int64_t step1, int64_t freq, int64_t t_end) {
  return freq > 0 && step1 > 0 && step1 % freq == 0 && step1 < t_end;
}

bool SriglAccumulatesAt(int64_t step1, int64_t freq, int64_t accumulate, int64_t t_end) {
  if (freq <= 0 || step1 <= 0) return false;
  const int64_t next_update = (step1 + freq - 1) / freq * freq;  // The first update at or after step1.
  return next_update - step1 < accumulate && SriglUpdatesAt(next_update, freq, t_end);
}

StepSchedule SriglDropFraction(double alpha, int64_t t_end) {
  StepSchedule s;
  s.type = StepSchedule::Type::kCosine;
  s.start_value = alpha;
  s.end_value = 0.0;
  s.end_step = t_end;
  return s;
}

torch::Tensor InitialConstFanInMask(const torch::Tensor& weight, double sparsity, uint64_t seed) {
  torch::NoGradGuard no_grad;
  const int64_t rows = Rows(weight), cols = weight.numel() / std::max<int64_t>(1, rows);
  const int64_t dropped = static_cast<int64_t>(static_cast<double>(cols) * std::clamp(sparsity, 0.0, 1.0));
  const torch::Tensor scores = RandomScores(weight, seed).reshape({rows, cols});
  return TopKRows(scores, cols - dropped).reshape(weight.sizes()).to(weight.scalar_type());
}

torch::Tensor ConstFanInDropAndGrow(const torch::Tensor& weight, const torch::Tensor& mask,
                                    const torch::Tensor& dense_grad, const ConstFanInUpdate& u) {
  torch::NoGradGuard no_grad;
  const int64_t rows = Rows(weight), cols = weight.numel() / std::max<int64_t>(1, rows);
  const int64_t budget = ConstFanInBudget(weight.numel(), u.sparsity);
  const torch::Tensor w = weight.detach().reshape({rows, cols}).abs().to(torch::kDouble);
  const torch::Tensor m = mask.detach().reshape({rows, cols}).gt(0);
  const torch::Tensor g = dense_grad.detach().to(weight.device(), torch::kDouble).reshape({rows, cols}).abs();
  // Counts stay on the device (long scalars).
  const torch::Tensor n_ones = m.sum();
  const torch::Tensor n_prune_wanted =
      (n_ones.to(torch::kDouble) * std::clamp(u.drop_fraction, 0.0, 1.0)).floor().to(torch::kLong);
  const torch::Tensor n_keep = torch::minimum(n_ones - n_prune_wanted, w.ne(0).sum());
  const torch::Tensor n_prune = n_ones - n_keep;

  torch::Tensor ablated = torch::zeros({rows}, m.options());
  if (u.ablation) {
    const torch::Tensor salient = TopKOfLayer(w, n_keep) | TopKOfLayer(g, n_prune);
    const torch::Tensor counts = salient.sum(1);
    const torch::Tensor k_before = m.sum(1).max();
    torch::Tensor threshold = (k_before.to(torch::kDouble) * u.min_salient_weights_per_neuron)
                                  .floor()
                                  .to(torch::kLong)
                                  .clamp_min(1);
    const int64_t min_neurons = std::min(budget / std::max<int64_t>(1, cols), rows - 1);
    const torch::Tensor sorted = std::get<0>(counts.sort(/*stable=*/true, /*dim=*/0, /*descending=*/true));
    threshold = torch::minimum(threshold, sorted[min_neurons]);
    ablated = counts.lt(threshold);
  }
  const torch::Tensor k =
      torch::floor_divide(torch::full({}, budget, n_ones.options()), (rows - ablated.sum()).clamp_min(1));
  // Drop: the layer's top n_keep |W| outside ablated rows, then over-full rows keep their lowest columns.
  torch::Tensor keep =
      TopKOfLayer(w.masked_fill(ablated.unsqueeze(1), -1.0), n_keep) & ablated.logical_not().unsqueeze(1);
  keep = keep & keep.cumsum(1).le(k);
  // Grow: per surviving row, the largest |grad| among the positions not kept, up to k.
  const torch::Tensor need = (k - keep.sum(1)).clamp_min(0).masked_fill(ablated, 0).unsqueeze(1);
  const torch::Tensor grow = RanksBelow(g.masked_fill(keep, -1.0), need).gt(0);
  return (keep | grow).reshape(weight.sizes()).to(weight.scalar_type());
}

}  // namespace dynamic
}  // namespace nmsparse
