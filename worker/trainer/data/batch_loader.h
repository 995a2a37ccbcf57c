// Turns a Dataset into normalised float batches for one rank. The order of an epoch is a permutation of the
// dataset seeded by (seed, epoch); optimizer step s uses images [s*G, (s+1)*G) of it (G = global batch), and
// rank r takes every world-th of those, so ranks read disjoint slices and the union over ranks is the batch a
// single process would use. Augmentation is seeded per (seed, epoch, image), independent of the rank count.
// A batch is a pure function of (epoch, step): resuming needs no loader state.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_BATCH_LOADER_H_
#define NMSPARSE_WORKER_TRAINER_DATA_BATCH_LOADER_H_

#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "worker/trainer/data/dataset.h"

namespace nmsparse {

struct AugmentOptions {
  int crop_padding = 0;  // Zero-pad by this many pixels, then crop back at a random offset (0: off).
  double hflip = 0.0;    // Probability of a horizontal flip.
};

struct Normalization {
  std::vector<float> mean;  // One per channel (or one for all).
  std::vector<float> std;
};

// Fashion-MNIST's per-pixel mean and std; 0.5 / 0.5 otherwise.
Normalization DefaultNormalization(const std::string& dataset);

struct Batch {
  torch::Tensor images;  // [B, C, H, W] float32, normalised
  torch::Tensor labels;  // [B] int64
};

// A permutation of [0, n) that depends only on (seed, epoch) (Fisher-Yates over SplitMix64).
std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int epoch);

class TrainLoader {
 public:
  TrainLoader(const Dataset* data, int64_t global_batch, int rank, int world, uint64_t seed,
              AugmentOptions augment, Normalization norm);
  int64_t steps_per_epoch() const {
    return data_->size() / global_batch_;
  }  // The last partial batch is dropped.
  int64_t local_batch() const { return global_batch_ / world_; }
  Batch Get(int epoch, int64_t step);

 private:
  const Dataset* data_;
  int64_t global_batch_;
  int rank_, world_;
  uint64_t seed_;
  AugmentOptions augment_;
  Normalization norm_;
  int cached_epoch_ = -1;
  std::vector<int64_t> permutation_;
};

// Images `indices` of `data`, without augmentation, normalised (evaluation).
Batch LoadBatch(const Dataset& data, const std::vector<int64_t>& indices, const Normalization& norm);

// Images with augmentation seeded by `augment_seed` and each image's index.
Batch LoadAugmentedBatch(const Dataset& data, const std::vector<int64_t>& indices, const Normalization& norm,
                         const AugmentOptions& augment, uint64_t augment_seed);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_BATCH_LOADER_H_
