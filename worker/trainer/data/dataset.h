// A labelled image dataset, read one uint8 CHW image at a time. Plain C++ (no LibTorch) so that the shard
// converter and the readers compile fast; the batch loader turns images into tensors.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_DATASET_H_
#define NMSPARSE_WORKER_TRAINER_DATA_DATASET_H_

#include <cstdint>
#include <vector>

namespace nmsparse {

struct ImageShape {
  int channels = 1;
  int height = 28;
  int width = 28;
  int64_t numel() const { return static_cast<int64_t>(channels) * height * width; }
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual ImageShape shape() const = 0;
  virtual int num_classes() const = 0;
  // Writes image `index` (0 <= index < size()) as shape().numel() bytes, channel-major, and returns its
  // label.
  virtual int64_t Read(int64_t index, uint8_t* pixels) const = 0;
  // Image `index` as the training loader reads it in `epoch`, with the image's random stream `image_seed`:
  // datasets that transform on read (transformed_dataset.h) draw from it; stored ones read as Read does.
  virtual int64_t ReadForEpoch(int64_t index, int epoch, uint64_t image_seed, uint8_t* pixels) const {
    (void)epoch;
    (void)image_seed;
    return Read(index, pixels);
  }
};

// A dataset held in memory (Fashion-MNIST is 47 MB).
class InMemoryDataset : public Dataset {
 public:
  InMemoryDataset(ImageShape shape, int num_classes, std::vector<uint8_t> pixels,
                  std::vector<int64_t> labels);
  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  ImageShape shape() const override { return shape_; }
  int num_classes() const override { return num_classes_; }
  int64_t Read(int64_t index, uint8_t* pixels) const override;

 private:
  ImageShape shape_;
  int num_classes_;
  std::vector<uint8_t> pixels_;
  std::vector<int64_t> labels_;
};

// The first `count` images of `base` (all of them when count is 0 or larger than base).
class SubsetDataset : public Dataset {
 public:
  SubsetDataset(const Dataset* base, int64_t count);
  int64_t size() const override { return count_; }
  ImageShape shape() const override { return base_->shape(); }
  int num_classes() const override { return base_->num_classes(); }
  int64_t Read(int64_t index, uint8_t* pixels) const override { return base_->Read(index, pixels); }
  int64_t ReadForEpoch(int64_t index, int epoch, uint64_t image_seed, uint8_t* pixels) const override {
    return base_->ReadForEpoch(index, epoch, image_seed, pixels);
  }

 private:
  const Dataset* base_;
  int64_t count_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_DATASET_H_
