// Random images of any shape, a deterministic function of (seed, index): no files, any size, e.g. 3x224x224
// with 1000 classes for throughput runs. Each class has a fixed random prototype; an image is its class's
// prototype blended with per-image noise, so a model can learn it (labels are not pure noise). Reading one
// costs about a copy: prototypes are made once per class (on first use) and the noise is a window of a
// fixed random pool at an offset drawn per image, not a hash per pixel.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_SYNTHETIC_DATASET_H_
#define NMSPARSE_WORKER_TRAINER_DATA_SYNTHETIC_DATASET_H_

#include <cstdint>
#include <mutex>
#include <vector>

#include "worker/trainer/data/dataset.h"

namespace nmsparse {

class SyntheticDataset : public Dataset {
 public:
  SyntheticDataset(ImageShape shape, int num_classes, int64_t size, uint64_t seed);
  int64_t size() const override { return size_; }
  ImageShape shape() const override { return shape_; }
  int num_classes() const override { return num_classes_; }
  int64_t Read(int64_t index, uint8_t* pixels) const override;  // Thread-safe.

 private:
  const uint8_t* Prototype(int64_t label) const;

  ImageShape shape_;
  int num_classes_;
  int64_t size_;
  uint64_t seed_;
  std::vector<uint8_t> noise_;  // The pool: at least one image plus kNoiseOffsets bytes.
  mutable std::vector<std::once_flag> made_;
  mutable std::vector<std::vector<uint8_t>> prototypes_;
};

// Two keys mixed into one stream key (SplitMix64, common/split_mix64.h): the synthetic data and the data order.
uint64_t HashCombine(uint64_t a, uint64_t b);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_SYNTHETIC_DATASET_H_
