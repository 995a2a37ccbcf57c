#include "worker/trainer/data/cifar_dataset.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/trainer/data/image_folder_dataset.h"
#include "worker/trainer/data/raw_image_source.h"

namespace nmsparse {
namespace {

int LabelBytes(CifarVariant variant) { return variant == CifarVariant::kCifar10 ? 1 : 2; }
int NumClasses(CifarVariant variant) { return variant == CifarVariant::kCifar10 ? 10 : 100; }

}  // namespace

std::vector<std::string> CifarFiles(CifarVariant variant, bool train) {
  if (variant == CifarVariant::kCifar100) return {train ? "train.bin" : "test.bin"};
  if (!train) return {"test_batch.bin"};
  std::vector<std::string> files;
  for (int i = 1; i <= 5; ++i) files.push_back(absl::StrCat("data_batch_", i, ".bin"));
  return files;
}

absl::StatusOr<std::unique_ptr<InMemoryDataset>> LoadCifar(const std::string& dir, CifarVariant variant,
                                                           bool train, std::vector<int64_t>* first_records) {
  const int label_bytes = LabelBytes(variant);
  const int64_t record = label_bytes + kCifarImageBytes;
  const int num_classes = NumClasses(variant);
  std::vector<uint8_t> pixels;
  std::vector<int64_t> labels;
  for (const auto& file : CifarFiles(variant, train)) {
    const std::string path = dir + "/" + file;
    auto bytes = ReadWholeFile(path);
    if (!bytes.ok()) return bytes.status();
    const int64_t size = static_cast<int64_t>(bytes->size());
    if (size == 0 || size % record != 0) {
      return absl::DataLossError(absl::StrCat(path, ": ", size, " bytes is not a whole number of ", record,
                                              "-byte CIFAR-", num_classes, " records"));
    }
    if (first_records != nullptr) first_records->push_back(static_cast<int64_t>(labels.size()));
    const auto* p = reinterpret_cast<const uint8_t*>(bytes->data());
    for (int64_t at = 0; at < size; at += record) {
      const int label = p[at + label_bytes - 1];  // CIFAR-100: the fine label, after the coarse one.
      if (label >= num_classes) {
        return absl::DataLossError(absl::StrCat(path, ": record ", at / record, " has label ", label,
                                                " outside [0, ", num_classes, ")"));
      }
      labels.push_back(label);
      pixels.insert(pixels.end(), p + at + label_bytes, p + at + record);
    }
  }
  return std::make_unique<InMemoryDataset>(ImageShape{3, kCifarSide, kCifarSide}, num_classes,
                                           std::move(pixels), std::move(labels));
}

absl::StatusOr<std::unique_ptr<CifarEncodedDataset>> CifarEncodedDataset::Open(const std::string& dir,
                                                                               CifarVariant variant,
                                                                               bool train) {
  std::unique_ptr<CifarEncodedDataset> ds(new CifarEncodedDataset());
  auto images = LoadCifar(dir, variant, train, &ds->first_records_);
  if (!images.ok()) return images.status();
  ds->images_ = *std::move(images);
  for (const auto& file : CifarFiles(variant, train)) ds->files_.push_back(dir + "/" + file);
  return ds;
}

absl::StatusOr<EncodedSample> CifarEncodedDataset::Open(int64_t index) const {
  uint8_t chw[kCifarImageBytes];
  const int64_t label = images_->Read(index, chw);
  Image image;
  image.width = image.height = kCifarSide;
  image.pixels.resize(kCifarImageBytes);
  constexpr int kPlane = kCifarSide * kCifarSide;
  for (int i = 0; i < kPlane; ++i) {
    for (int c = 0; c < 3; ++c) image.pixels[3 * i + c] = chw[c * kPlane + i];
  }
  return EncodedSample{std::make_unique<RawImageSource>(std::move(image)), label};
}

std::string CifarEncodedDataset::Describe(int64_t index) const {
  const size_t file =
      std::upper_bound(first_records_.begin(), first_records_.end(), index) - first_records_.begin() - 1;
  return absl::StrCat(files_[file], " record ", index - first_records_[file]);
}

}  // namespace nmsparse
