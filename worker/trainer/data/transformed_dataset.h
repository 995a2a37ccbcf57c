// Stored images of any size (an EncodedDataset) read through a per-image transform (timm's training or
// evaluation pipeline) as the fixed-shape Dataset the batch loader reads: each image is opened, decoded and
// transformed on read, drawing from the stream the loader seeds per (seed, epoch, image), and written as CHW
// uint8. Images that cannot be opened or decoded are replaced by the next and recorded in the failure log
// (decode_failure_log.h), which the trainer reports per epoch and checks against its threshold.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMED_DATASET_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMED_DATASET_H_

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "worker/trainer/data/dataset.h"
#include "worker/trainer/data/decode_failure_log.h"
#include "worker/trainer/data/encoded_dataset.h"
#include "worker/trainer/data/image_transform.h"

namespace nmsparse {

// No image near an index decodes, or reading failed otherwise: the data is not usable (nmtrain exits with
// kExitData).
class DataReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TransformedDataset : public Dataset {
 public:
  // `data`, `transform` and `log` outlive this.
  TransformedDataset(const EncodedDataset* data, const ImageTransform* transform, DecodeFailureLog* log);

  int64_t size() const override { return data_->size(); }
  ImageShape shape() const override { return shape_; }
  int num_classes() const override { return data_->num_classes(); }
  // Epoch 0, stream 0 (the evaluation transform draws nothing).
  int64_t Read(int64_t index, uint8_t* pixels) const override { return ReadForEpoch(index, 0, 0, pixels); }
  // Throws DataReadError with the reader's message when no image near `index` decodes, or on an error
  // that is not bad data (decode_failure_log.h's DecodeOrReplace).
  int64_t ReadForEpoch(int64_t index, int epoch, uint64_t image_seed, uint8_t* pixels) const override;

 private:
  const EncodedDataset* data_;
  const ImageTransform* transform_;
  DecodeFailureLog* log_;
  ImageShape shape_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMED_DATASET_H_
