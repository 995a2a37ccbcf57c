// Turns a Dataset into normalised float batches for one rank. The order of an epoch is a permutation of the
// dataset seeded by (seed, epoch); optimizer step s uses images [s*G, (s+1)*G) of it (G = global batch), and
// rank r takes every world-th of those, so ranks read disjoint slices and the union over ranks is the batch a
// single process would use. Augmentation is seeded per (seed, epoch, image), independent of the rank count.
// With repeated augmentation (aug_repeats, repeat_aug_sampler.h) the epoch's order repeats each image and
// is cut as timm's RepeatAugSampler cuts it; augmentation is then seeded per position in that order, so
// that the copies of an image get different crops and flips (timm draws them afresh for every copy).
// A batch is a pure function of (epoch, step): resuming needs no loader state.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_BATCH_LOADER_H_
#define NMSPARSE_WORKER_TRAINER_DATA_BATCH_LOADER_H_

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "worker/trainer/data/dataset.h"
#include "worker/trainer/data/repeat_aug_sampler.h"

namespace nmsparse {

struct AugmentOptions {
  int crop_padding = 0;  // Zero-pad by this many pixels, then crop back at a random offset (0: off).
  double hflip = 0.0;    // Probability of a horizontal flip.
};

struct Normalization {
  std::vector<float> mean;  // One per channel (or one for all).
  std::vector<float> std;
};

struct Batch {
  torch::Tensor images;  // [B, C, H, W] float32, normalised
  torch::Tensor labels;  // [B] int64
};

// A batch as the loader builds it on the host: the pixels as stored (augmented) and the labels. In pinned
// (page-locked) memory when asked, so that the copy to a GPU runs asynchronously.
struct HostBatch {
  torch::Tensor images;  // [B, C, H, W] uint8, or float32 already normalised (HostFinish)
  torch::Tensor labels;  // [B] int64
};

// The host's last per-image steps, after the transform: normalisation and then random erasing, which timm
// applies to the normalised image. Writes the C x H x W floats of `chw` (uint8) to `out`, drawing from the
// image's stream `image_seed`. When a loader has one, its host batches are float32 and already normalised.
using HostFinish = std::function<void(const uint8_t* chw, float* out, uint64_t image_seed)>;

// Moves host batches to the training device and normalises uint8 ones there ((x / 255 - mean) / std), so that
// the host copies bytes only; the per-channel constants are placed on the device once. Float batches were
// normalised on the host (HostFinish) and are only copied. From pinned memory the copies do not wait for
// the device.
class DeviceTransfer {
 public:
  DeviceTransfer(const Normalization& norm, torch::Device device);
  Batch operator()(const HostBatch& batch) const;

 private:
  torch::Device device_;
  torch::Tensor mean_, std_;  // [1, C, 1, 1] float32 on device_.
};

// A permutation of [0, n) that depends only on (seed, epoch) (Fisher-Yates over SplitMix64).
std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int epoch);

// Thread-safe: loader threads may build several batches at once (prefetch_loader.h).
class TrainLoader {
 public:
  // `aug_repeats` > 0: each image that many times an epoch (timm's RepeatAugSampler).
  TrainLoader(const Dataset* data, int64_t global_batch, int rank, int world, uint64_t seed,
              AugmentOptions augment, Normalization norm, int aug_repeats = 0, HostFinish finish = nullptr);
  // The last partial batch is dropped (per rank with repeats, as timm's loader drops it).
  int64_t steps_per_epoch() const;
  int64_t local_batch() const { return global_batch_ / world_; }
  // This rank's images of (epoch, step), on the host; in pinned memory when `pin_memory`.
  HostBatch GetHost(int epoch, int64_t step, bool pin_memory = false) const;
  // The same batch normalised on the CPU.
  Batch Get(int epoch, int64_t step) const;

 private:
  std::shared_ptr<const std::vector<int64_t>> Permutation(int epoch) const;

  const Dataset* data_;
  int64_t global_batch_;
  int rank_, world_;
  uint64_t seed_;
  AugmentOptions augment_;
  Normalization norm_;
  HostFinish finish_;
  std::unique_ptr<RepeatAugSampler> repeat_;  // Null without repeated augmentation.
  mutable std::mutex mu_;                     // Guards the cache of the latest epochs' permutations.
  mutable std::map<int, std::shared_ptr<const std::vector<int64_t>>> permutations_;
};

// Images `indices` of `data`, without augmentation, normalised (evaluation).
Batch LoadBatch(const Dataset& data, const std::vector<int64_t>& indices, const Normalization& norm);

// Images with augmentation seeded by `augment_seed` and each image's index.
Batch LoadAugmentedBatch(const Dataset& data, const std::vector<int64_t>& indices, const Normalization& norm,
                         const AugmentOptions& augment, uint64_t augment_seed);

// The same images as stored (uint8), not normalised; in pinned memory when `pin_memory`. Image i is read for
// `epoch` (Dataset::ReadForEpoch) with the stream HashCombine(augment_seed, key), key (*augment_keys)[i], or
// its index when `augment_keys` is null. With `finish`, float32 images finished by it.
HostBatch LoadHostBatch(const Dataset& data, const std::vector<int64_t>& indices,
                        const AugmentOptions& augment, uint64_t augment_seed, bool pin_memory = false,
                        const std::vector<int64_t>* augment_keys = nullptr, int epoch = 0,
                        const HostFinish& finish = nullptr);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_BATCH_LOADER_H_
