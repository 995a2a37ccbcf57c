#include "worker/trainer/data/synthetic_dataset.h"

#include <stdexcept>

namespace nmsparse {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t HashCombine(uint64_t a, uint64_t b) { return SplitMix64(a ^ SplitMix64(b + 0x632be59bd9b4e019ULL)); }

SyntheticDataset::SyntheticDataset(ImageShape shape, int num_classes, int64_t size, uint64_t seed)
    : shape_(shape), num_classes_(num_classes), size_(size), seed_(seed) {
  if (num_classes <= 0 || size < 0 || shape.numel() <= 0) {
    throw std::invalid_argument("synthetic dataset: classes, size and image shape must be positive");
  }
}

int64_t SyntheticDataset::Read(int64_t index, uint8_t* pixels) const {
  const uint64_t image_key = HashCombine(seed_, static_cast<uint64_t>(index));
  const int64_t label = static_cast<int64_t>(SplitMix64(image_key) % static_cast<uint64_t>(num_classes_));
  const uint64_t class_key = HashCombine(seed_ ^ 0x5eed5eedULL, static_cast<uint64_t>(label));
  const int64_t n = shape_.numel();
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t prototype = SplitMix64(class_key + static_cast<uint64_t>(i)) & 0xff;
    const uint64_t noise = SplitMix64(image_key + static_cast<uint64_t>(i)) & 0xff;
    pixels[i] = static_cast<uint8_t>((3 * prototype + noise) / 4);
  }
  return label;
}

}  // namespace nmsparse
