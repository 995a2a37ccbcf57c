#include "worker/trainer/data/dataset.h"

#include <cstring>
#include <stdexcept>
#include <utility>

namespace nmsparse {

InMemoryDataset::InMemoryDataset(ImageShape shape, int num_classes, std::vector<uint8_t> pixels,
                                 std::vector<int64_t> labels)
    : shape_(shape), num_classes_(num_classes), pixels_(std::move(pixels)), labels_(std::move(labels)) {
  if (static_cast<int64_t>(pixels_.size()) != shape_.numel() * size()) {
    throw std::invalid_argument("in-memory dataset: pixel buffer does not hold size() images");
  }
}

int64_t InMemoryDataset::Read(int64_t index, uint8_t* pixels) const {
  const int64_t n = shape_.numel();
  std::memcpy(pixels, pixels_.data() + index * n, n);
  return labels_[index];
}

SubsetDataset::SubsetDataset(const Dataset* base, int64_t count)
    : base_(base), count_(count <= 0 || count > base->size() ? base->size() : count) {}

}  // namespace nmsparse
