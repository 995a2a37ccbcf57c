#include "worker/trainer/data/batch_loader.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "worker/trainer/data/synthetic_dataset.h"

namespace nmsparse {
namespace {

// Zero-padded random crop and optional horizontal flip of one CHW image, in place.
void Augment(uint8_t* image, const ImageShape& s, const AugmentOptions& a, uint64_t key,
             std::vector<uint8_t>& tmp) {
  const int p = a.crop_padding;
  const uint64_t r = SplitMix64(key);
  const int dy = p > 0 ? static_cast<int>(r % (2 * p + 1)) - p : 0;
  const int dx = p > 0 ? static_cast<int>((r >> 16) % (2 * p + 1)) - p : 0;
  const bool flip =
      a.hflip > 0 && static_cast<double>(SplitMix64(key ^ 0xf11bULL) >> 11) * 0x1.0p-53 < a.hflip;
  if (dy == 0 && dx == 0 && !flip) return;
  tmp.assign(image, image + s.numel());
  for (int c = 0; c < s.channels; ++c) {
    for (int y = 0; y < s.height; ++y) {
      for (int x = 0; x < s.width; ++x) {
        const int sy = y + dy;
        const int sx = (flip ? s.width - 1 - x : x) + dx;
        const bool inside = sy >= 0 && sy < s.height && sx >= 0 && sx < s.width;
        image[(c * s.height + y) * s.width + x] = inside ? tmp[(c * s.height + sy) * s.width + sx] : 0;
      }
    }
  }
}

Batch ToTensors(std::vector<uint8_t>& pixels, std::vector<int64_t>& labels, const ImageShape& s,
                const Normalization& norm) {
  const int64_t b = static_cast<int64_t>(labels.size());
  auto images = torch::from_blob(pixels.data(), {b, s.channels, s.height, s.width}, torch::kUInt8)
                    .to(torch::kFloat32)
                    .div_(255.0);
  auto mean = torch::tensor(norm.mean).view({1, -1, 1, 1});
  auto std = torch::tensor(norm.std).view({1, -1, 1, 1});
  images.sub_(mean).div_(std);
  return {images, torch::tensor(labels, torch::kInt64)};
}

}  // namespace

Normalization DefaultNormalization(const std::string& dataset) {
  if (dataset == "fashion_mnist") return {{0.2860f}, {0.3530f}};
  return {{0.5f}, {0.5f}};
}

std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int epoch) {
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  uint64_t state = HashCombine(seed, 0xe90c0000ULL + static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0; --i) {
    state = SplitMix64(state);
    std::swap(perm[i], perm[static_cast<int64_t>(state % static_cast<uint64_t>(i + 1))]);
  }
  return perm;
}

TrainLoader::TrainLoader(const Dataset* data, int64_t global_batch, int rank, int world, uint64_t seed,
                         AugmentOptions augment, Normalization norm)
    : data_(data),
      global_batch_(global_batch),
      rank_(rank),
      world_(world),
      seed_(seed),
      augment_(augment),
      norm_(std::move(norm)) {
  if (global_batch <= 0 || global_batch % world != 0) {
    throw std::invalid_argument("batch_size " + std::to_string(global_batch) +
                                " must be a positive multiple of the world size " + std::to_string(world));
  }
}

Batch TrainLoader::Get(int epoch, int64_t step) {
  if (epoch != cached_epoch_) {
    permutation_ = EpochPermutation(data_->size(), seed_, epoch);
    cached_epoch_ = epoch;
  }
  std::vector<int64_t> indices;
  indices.reserve(local_batch());
  for (int64_t i = step * global_batch_ + rank_; i < (step + 1) * global_batch_; i += world_) {
    indices.push_back(permutation_[i]);
  }
  return LoadAugmentedBatch(*data_, indices, norm_, augment_, HashCombine(seed_, 0xa0000000ULL + epoch));
}

Batch LoadBatch(const Dataset& data, const std::vector<int64_t>& indices, const Normalization& norm) {
  return LoadAugmentedBatch(data, indices, norm, AugmentOptions{}, 0);
}

Batch LoadAugmentedBatch(const Dataset& data, const std::vector<int64_t>& indices, const Normalization& norm,
                         const AugmentOptions& augment, uint64_t augment_seed) {
  const ImageShape s = data.shape();
  const int64_t n = s.numel();
  std::vector<uint8_t> pixels(indices.size() * n);
  std::vector<int64_t> labels(indices.size());
  std::vector<uint8_t> tmp;
  const bool augmenting = augment.crop_padding > 0 || augment.hflip > 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    uint8_t* image = pixels.data() + i * n;
    labels[i] = data.Read(indices[i], image);
    if (augmenting) Augment(image, s, augment, HashCombine(augment_seed, indices[i]), tmp);
  }
  return ToTensors(pixels, labels, s, norm);
}

}  // namespace nmsparse
