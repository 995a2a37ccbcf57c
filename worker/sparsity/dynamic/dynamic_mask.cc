#include "worker/sparsity/dynamic/dynamic_mask.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>

namespace nmsparse {
namespace dynamic {
namespace {

int64_t Rows(const torch::Tensor& t) { return t.dim() == 0 ? 1 : t.size(0); }

// Scores made strictly ordered: `primary` dominates, `secondary` in [0, 1) only breaks its ties.
torch::Tensor Lexicographic(const torch::Tensor& primary, const torch::Tensor& secondary) {
  return primary.to(torch::kDouble) * 2.0 + secondary.to(torch::kDouble);
}

}  // namespace

torch::Tensor ToBlocks(const torch::Tensor& t, const Blocks& b) {
  const int64_t go = std::max<int64_t>(1, b.out_groups), gi = std::max<int64_t>(1, b.in_groups);
  const int64_t rows = Rows(t), cols = t.numel() / std::max<int64_t>(1, rows);
  TORCH_CHECK(rows % go == 0 && cols % gi == 0, "blocks ", go, "x", gi, " do not divide ", rows, "x", cols);
  return t.reshape({go, rows / go, gi, cols / gi}).permute({0, 2, 1, 3}).reshape({go * gi, -1});
}

torch::Tensor FromBlocks(const torch::Tensor& blocks, torch::IntArrayRef shape, const Blocks& b) {
  const int64_t go = std::max<int64_t>(1, b.out_groups), gi = std::max<int64_t>(1, b.in_groups);
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  const int64_t rows = shape.empty() ? 1 : shape[0], cols = numel / std::max<int64_t>(1, rows);
  return blocks.reshape({go, gi, rows / go, cols / gi}).permute({0, 2, 1, 3}).reshape(shape);
}

int64_t ActivePerBlock(int64_t block_size, double sparsity) {
  const int64_t pruned = std::llround(std::clamp(sparsity, 0.0, 1.0) * static_cast<double>(block_size));
  return block_size - pruned;
}

// 1 where an element's rank in its row (0: the largest; ties by index, lowest first) is below `k`, which is a
// number or a tensor on the scores' device (no host read).
template <typename K>
torch::Tensor BelowRank(const torch::Tensor& scores, const K& k) {
  // A stable descending sort makes ties go to the lowest index, the same on every platform and device.
  const torch::Tensor order = std::get<1>(scores.sort(/*stable=*/true, /*dim=*/1, /*descending=*/true));
  const torch::Tensor positions = torch::arange(scores.size(1), order.options()).expand_as(order);
  const torch::Tensor ranks = torch::empty_like(order).scatter_(1, order, positions);
  return ranks.lt(k).to(torch::kFloat);
}

torch::Tensor TopKRows(const torch::Tensor& scores, int64_t k) {
  return BelowRank(scores, std::clamp<int64_t>(k, 0, scores.size(1)));
}

torch::Tensor RanksBelow(const torch::Tensor& scores, const torch::Tensor& k) { return BelowRank(scores, k); }

torch::Tensor RandomScores(const torch::Tensor& like, uint64_t seed) {
  // Drawn on the CPU (the same numbers on any device), then copied without the host waiting: from pinned
  // memory, asynchronously, to a GPU.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  torch::Tensor scores = torch::rand(like.sizes(), gen, torch::TensorOptions().dtype(torch::kFloat));
  if (like.device().is_cpu()) return scores;
  return scores.pin_memory().to(like.device(), /*non_blocking=*/true);
}

// Every function below stays on the weight's device: a mask update reads nothing back to the host.

torch::Tensor InitialMask(const torch::Tensor& weight, double sparsity, Init init, const Blocks& b,
                          uint64_t seed) {
  torch::NoGradGuard no_grad;
  const auto w = weight.detach();
  torch::Tensor scores;
  switch (init) {
    case Init::kRandom:
      scores = RandomScores(w, seed);
      break;
    case Init::kTopk:
      scores = w.abs();
      break;
    case Init::kFromZeros:
      scores = Lexicographic(w.ne(0), RandomScores(w, seed));
      break;
  }
  auto blocks = ToBlocks(scores, b);
  auto mask = TopKRows(blocks, ActivePerBlock(blocks.size(1), sparsity));
  return FromBlocks(mask, weight.sizes(), b).to(weight.scalar_type());
}

torch::Tensor PruneByMagnitude(const torch::Tensor& weight, const torch::Tensor& mask, double sparsity,
                               const Blocks& b) {
  torch::NoGradGuard no_grad;
  const auto w = weight.detach();
  // Active weights first (by |W|); inactive ones only when the level goes down.
  auto scores = ToBlocks(Lexicographic(mask.gt(0), w.abs() / (w.abs().max() + 1.0)), b);
  auto out = TopKRows(scores, ActivePerBlock(scores.size(1), sparsity));
  return FromBlocks(out, weight.sizes(), b).to(weight.scalar_type());
}

torch::Tensor DropAndGrow(const torch::Tensor& weight, const torch::Tensor& mask,
                          const torch::Tensor& grow_score, double sparsity, double drop_fraction,
                          const Blocks& b) {
  torch::NoGradGuard no_grad;
  const auto w = weight.detach();
  auto active = ToBlocks(mask.gt(0), b);
  const int64_t size = active.size(1);
  const int64_t target = ActivePerBlock(size, sparsity);
  // Blocks hold equal counts (they are only ever set by TopKRows with one k); use the smallest to be safe.
  // The counts stay on the device: grown = round(drop_fraction * min(target, current)) (halves up, as
  // llround), kept = target - grown, and when that exceeds what is active, kept = current.
  const torch::Tensor current = active.sum(1).min();
  const torch::Tensor grown_wanted =
      (current.clamp_max(target).to(torch::kDouble) * std::clamp(drop_fraction, 0.0, 1.0) + 0.5).floor();
  const torch::Tensor kept = torch::minimum(target - grown_wanted.to(torch::kLong), current);
  auto keep = BelowRank(ToBlocks(Lexicographic(mask.gt(0), w.abs() / (w.abs().max() + 1.0)), b), kept);
  // Kept weights can not be grown again; the rest compete on the grow score.
  auto grow_blocks = ToBlocks(grow_score.detach().to(w.device(), torch::kDouble).abs(), b);
  grow_blocks.masked_fill_(keep.gt(0), -1.0);
  auto grow = BelowRank(grow_blocks, target - kept);
  auto out = (keep + grow).clamp_max(1.0f);
  return FromBlocks(out, weight.sizes(), b).to(weight.scalar_type());
}

}  // namespace dynamic
}  // namespace nmsparse
