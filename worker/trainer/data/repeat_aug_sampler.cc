#include "worker/trainer/data/repeat_aug_sampler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nmsparse {
namespace {

constexpr int64_t kSelectedRound = 256;  // timm's selected_round default.

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

RepeatAugSampler::RepeatAugSampler(int64_t dataset_size, int repeats, int world)
    : dataset_size_(dataset_size), repeats_(repeats), world_(world) {
  if (dataset_size <= 0 || repeats < 1 || world < 1) {
    throw std::invalid_argument("RepeatAugSampler: dataset size " + std::to_string(dataset_size) +
                                ", repeats " + std::to_string(repeats) + ", world " + std::to_string(world));
  }
  // timm: floor(n // round * round / ratio) in float arithmetic; for integers below 2^53 the integer
  // quotient is the same.
  const int64_t selected = dataset_size >= kSelectedRound
                               ? dataset_size / kSelectedRound * kSelectedRound / world
                               : CeilDiv(dataset_size, world);
  selected_per_rank_ = std::min(selected, CeilDiv(dataset_size * repeats, world));
}

int64_t RepeatAugSampler::IndexAt(const std::vector<int64_t>& permutation, int64_t position) const {
  return permutation[(position % (dataset_size_ * repeats_)) / repeats_];
}

std::vector<int64_t> RepeatAugSampler::RankIndices(const std::vector<int64_t>& permutation, int rank) const {
  std::vector<int64_t> out;
  out.reserve(selected_per_rank_);
  for (int64_t k = 0; k < selected_per_rank_; ++k) out.push_back(IndexAt(permutation, rank + k * world_));
  return out;
}

}  // namespace nmsparse
