// A labelled dataset of stored (usually JPEG-encoded) images of any size: ImageFolder, packed JPEG shards,
// CIFAR's binary files. The loader opens an image, a transform (image_transform.h) turns it into the model's
// input. Plain C++, no LibTorch.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_ENCODED_DATASET_H_
#define NMSPARSE_WORKER_TRAINER_DATA_ENCODED_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/trainer/data/image.h"

namespace nmsparse {

struct EncodedSample {
  std::unique_ptr<ImageSource> image;
  int64_t label = 0;
};

class EncodedDataset {
 public:
  virtual ~EncodedDataset() = default;
  virtual int64_t size() const = 0;
  virtual int num_classes() const = 0;
  // Image `index` (0 <= index < size()), with its header read (its size known) and its label. DataLoss or
  // NotFound, naming the file, when it cannot be read or is not an image; thread-safe.
  virtual absl::StatusOr<EncodedSample> Open(int64_t index) const = 0;
  // Where image `index` is stored, for messages: a file path, or a shard and an offset.
  virtual std::string Describe(int64_t index) const = 0;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_ENCODED_DATASET_H_
