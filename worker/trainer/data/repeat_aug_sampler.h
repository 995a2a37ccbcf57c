// Repeated augmentation as timm's RepeatAugSampler (timm/data/distributed_sampler.py) lays it out: the
// epoch's permutation with each image repeated `repeats` times in a row, rank r reading positions r, r +
// world, ... of it, so that an image's consecutive copies land on different ranks, and each rank's epoch cut
// to num_selected_samples. Step s of rank r then reads positions s * G + r + k * world (k < G / world) with
// G = world * local batch: the union over ranks of a step is positions [s * G, (s + 1) * G), the layout
// TrainLoader uses without repeats.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_REPEAT_AUG_SAMPLER_H_
#define NMSPARSE_WORKER_TRAINER_DATA_REPEAT_AUG_SAMPLER_H_

#include <cstdint>
#include <vector>

namespace nmsparse {

class RepeatAugSampler {
 public:
  // `dataset_size` images, each `repeats` (>= 1) times an epoch, over `world` ranks. timm's defaults
  // selected_round = 256 and selected_ratio = world: each rank reads floor(n // 256 * 256 / world) samples
  // (ceil(n / world) when n < 256), at most its share ceil(n * repeats / world) of the repeated order.
  RepeatAugSampler(int64_t dataset_size, int repeats, int world);

  // Samples each rank reads an epoch (timm's num_selected_samples, its len()).
  int64_t selected_per_rank() const { return selected_per_rank_; }

  // The dataset index at `position` of the epoch's repeated order, for the epoch's `permutation` of the
  // dataset; positions past the repeated order wrap around, as timm pads.
  int64_t IndexAt(const std::vector<int64_t>& permutation, int64_t position) const;

  // The indices rank `rank` reads in an epoch, in order (timm's iter(sampler) for that rank).
  std::vector<int64_t> RankIndices(const std::vector<int64_t>& permutation, int rank) const;

 private:
  int64_t dataset_size_;
  int repeats_;
  int world_;
  int64_t selected_per_rank_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_REPEAT_AUG_SAMPLER_H_
