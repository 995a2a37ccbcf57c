// CIFAR-10 and CIFAR-100 in their binary distribution (https://www.cs.toronto.edu/~kriz/cifar.html):
//   cifar-10-batches-bin/  data_batch_1.bin .. data_batch_5.bin (train), test_batch.bin (eval);
//                          records of 1 label byte + 3072 pixel bytes (32x32, R then G then B planes)
//   cifar-100-binary/      train.bin, test.bin; records of 1 coarse + 1 fine label byte + 3072 pixel bytes
//                          (the fine label, 100 classes, is the one used)
// Read whole into memory (CIFAR-10's training set is 150 MB), as the fixed-shape Dataset for the native
// 32x32 path, or as an EncodedDataset for timm's transforms.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_CIFAR_DATASET_H_
#define NMSPARSE_WORKER_TRAINER_DATA_CIFAR_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/trainer/data/dataset.h"
#include "worker/trainer/data/encoded_dataset.h"

namespace nmsparse {

enum class CifarVariant { kCifar10, kCifar100 };

constexpr int kCifarSide = 32;
constexpr int64_t kCifarImageBytes = 3 * kCifarSide * kCifarSide;

// The files of a split, relative to the distribution's directory.
std::vector<std::string> CifarFiles(CifarVariant variant, bool train);

// The split as 3x32x32 CHW images. NotFound naming a missing file; DataLoss naming a file whose size is not
// a whole number of records, or a label out of range. `first_records`, when given, receives the index of each
// file's first record.
absl::StatusOr<std::unique_ptr<InMemoryDataset>> LoadCifar(const std::string& dir, CifarVariant variant,
                                                           bool train,
                                                           std::vector<int64_t>* first_records = nullptr);

// The same images as sources of RGB pixels (Decode returns them at 32x32 whatever the denominator).
class CifarEncodedDataset : public EncodedDataset {
 public:
  static absl::StatusOr<std::unique_ptr<CifarEncodedDataset>> Open(const std::string& dir,
                                                                   CifarVariant variant, bool train);
  int64_t size() const override { return images_->size(); }
  int num_classes() const override { return images_->num_classes(); }
  absl::StatusOr<EncodedSample> Open(int64_t index) const override;
  std::string Describe(int64_t index) const override;

 private:
  CifarEncodedDataset() = default;
  std::unique_ptr<InMemoryDataset> images_;
  std::vector<std::string> files_;
  std::vector<int64_t> first_records_;  // Of each file.
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_CIFAR_DATASET_H_
