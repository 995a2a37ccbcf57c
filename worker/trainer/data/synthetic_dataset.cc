#include "worker/trainer/data/synthetic_dataset.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "common/split_mix64.h"

namespace nmsparse {

uint64_t HashCombine(uint64_t a, uint64_t b) { return SplitMix64(a ^ SplitMix64(b + 0x632be59bd9b4e019ULL)); }

namespace {

// Distinct noise windows: an image's noise starts at one of this many offsets of the pool.
constexpr int64_t kNoiseOffsets = int64_t{1} << 20;

// `n` bytes from SplitMix64 over (key + i), eight bytes per call.
void FillRandom(uint64_t key, uint8_t* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    const uint64_t r = SplitMix64(key + static_cast<uint64_t>(i / 8));
    std::memcpy(out + i, &r, static_cast<size_t>(std::min<int64_t>(8, n - i)));
  }
}

}  // namespace

SyntheticDataset::SyntheticDataset(ImageShape shape, int num_classes, int64_t size, uint64_t seed)
    : shape_(shape), num_classes_(num_classes), size_(size), seed_(seed) {
  if (num_classes <= 0 || size < 0 || shape.numel() <= 0) {
    throw std::invalid_argument("synthetic dataset: classes, size and image shape must be positive");
  }
  noise_.resize(static_cast<size_t>(shape.numel() + kNoiseOffsets));
  FillRandom(HashCombine(seed ^ 0x0157e0ULL, 0), noise_.data(), static_cast<int64_t>(noise_.size()));
  made_ = std::vector<std::once_flag>(static_cast<size_t>(num_classes));
  prototypes_.resize(static_cast<size_t>(num_classes));
}

const uint8_t* SyntheticDataset::Prototype(int64_t label) const {
  const auto c = static_cast<size_t>(label);
  std::call_once(made_[c], [&] {
    prototypes_[c].resize(static_cast<size_t>(shape_.numel()));
    FillRandom(HashCombine(seed_ ^ 0x5eed5eedULL, static_cast<uint64_t>(label)), prototypes_[c].data(),
               shape_.numel());
  });
  return prototypes_[c].data();
}

int64_t SyntheticDataset::Read(int64_t index, uint8_t* pixels) const {
  const uint64_t image_key = HashCombine(seed_, static_cast<uint64_t>(index));
  const int64_t label = static_cast<int64_t>(SplitMix64(image_key) % static_cast<uint64_t>(num_classes_));
  const uint8_t* prototype = Prototype(label);
  const uint8_t* noise = noise_.data() + (SplitMix64(image_key ^ 0x0ff5e7ULL) % kNoiseOffsets);
  const int64_t n = shape_.numel();
  for (int64_t i = 0; i < n; ++i) {
    pixels[i] = static_cast<uint8_t>((3 * static_cast<unsigned>(prototype[i]) + noise[i]) / 4);
  }
  return label;
}

}  // namespace nmsparse
