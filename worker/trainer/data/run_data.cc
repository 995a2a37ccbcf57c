#include "worker/trainer/data/run_data.h"

#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "schemas/data_pipeline.h"
#include "worker/trainer/data/cifar_dataset.h"
#include "worker/trainer/data/idx_reader.h"
#include "worker/trainer/data/image_folder_dataset.h"
#include "worker/trainer/data/packed_jpeg_dataset.h"
#include "worker/trainer/data/shard_dataset.h"
#include "worker/trainer/data/synthetic_dataset.h"
#include "worker/trainer/data/transformed_dataset.h"

namespace nmsparse {
namespace {

// Images [offset, offset + count) of `base`.
class OffsetDataset : public Dataset {
 public:
  OffsetDataset(std::unique_ptr<Dataset> base, int64_t offset, int64_t count)
      : base_(std::move(base)), offset_(offset), count_(count) {}
  int64_t size() const override { return count_; }
  ImageShape shape() const override { return base_->shape(); }
  int num_classes() const override { return base_->num_classes(); }
  int64_t Read(int64_t i, uint8_t* pixels) const override { return base_->Read(offset_ + i, pixels); }

 private:
  std::unique_ptr<Dataset> base_;
  int64_t offset_, count_;
};

// Spec mistakes, found before any file is opened.
absl::Status CheckDataSpec(const DataConfig& dc) {
  if (dc.dataset != "fashion_mnist" && dc.dataset != "synthetic" && dc.dataset != "shards" &&
      !IsStoredImageDataset(dc.dataset))
    return absl::InvalidArgumentError(absl::StrCat("data.dataset: unknown dataset '", dc.dataset, "'"));
  if ((dc.dataset == "shards" || IsStoredImageDataset(dc.dataset)) && dc.path.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("data.path: the ", dc.dataset, " dataset needs a directory"));
  return absl::OkStatus();
}

// The evaluation split's folder or shard prefix: `val`, or `validation` (timm's reference configs' val_split)
// when only that exists.
std::string EvalSplit(const std::string& root, const std::string& dataset) {
  struct stat st;
  if (dataset == "imagefolder") {
    return stat((root + "/val").c_str(), &st) != 0 && stat((root + "/validation").c_str(), &st) == 0
               ? "validation"
               : "val";
  }
  return "val";
}

absl::StatusOr<std::unique_ptr<EncodedDataset>> OpenStored(const DataConfig& dc, bool train) {
  const std::string split = train ? "train" : EvalSplit(dc.path, dc.dataset);
  if (dc.dataset == "imagefolder") return ImageFolderDataset::Open(dc.path, split);
  if (dc.dataset == "packed") return PackedJpegDataset::Open(dc.path, split);
  return CifarEncodedDataset::Open(
      dc.path, dc.dataset == "cifar100" ? CifarVariant::kCifar100 : CifarVariant::kCifar10, train);
}

// Stored images through the run's transforms (schemas/data_pipeline.h), to the model's size.
absl::Status OpenStoredSplits(const ExperimentConfig& config, RunData& d) {
  auto pipeline = ResolveDataPipeline(config);
  if (!pipeline.ok()) return absl::InvalidArgumentError(pipeline.status().message());
  auto transforms = MakeRunTransforms(*pipeline);
  if (!transforms.ok()) return absl::InvalidArgumentError(transforms.status().message());
  d.transforms = *std::move(transforms);
  auto train = OpenStored(config.data, true);
  if (!train.ok()) return train.status();
  auto eval = OpenStored(config.data, false);
  if (!eval.ok()) return eval.status();
  d.encoded_train = *std::move(train);
  d.encoded_eval = *std::move(eval);
  d.train_failures = std::make_unique<DecodeFailureLog>();
  d.eval_failures = std::make_unique<DecodeFailureLog>();
  d.train_all = std::make_unique<TransformedDataset>(d.encoded_train.get(), d.transforms.train.get(),
                                                     d.train_failures.get());
  d.eval_all = std::make_unique<TransformedDataset>(d.encoded_eval.get(), d.transforms.eval.get(),
                                                    d.eval_failures.get());
  d.norm = d.transforms.normalization;
  return absl::OkStatus();
}

absl::Status OpenSplits(const DataConfig& dc, uint64_t seed, const ModelArch& arch, RunData& d) {
  if (dc.dataset == "fashion_mnist") {
    auto train = LoadFashionMnist(dc.path, true);
    if (!train.ok()) return train.status();
    auto eval = LoadFashionMnist(dc.path, false);
    if (!eval.ok()) return eval.status();
    d.train_all = std::move(*train);
    d.eval_all = std::move(*eval);
  } else if (dc.dataset == "synthetic") {
    const ImageShape shape{arch.in_chans, arch.img_size, arch.img_size};
    const int64_t eval_size = dc.eval_subset > 0 ? dc.eval_subset : std::max(1, dc.synthetic_size / 4);
    d.train_all = std::make_unique<SyntheticDataset>(shape, arch.num_classes, dc.synthetic_size, seed);
    // Same class prototypes (seed), other images.
    d.eval_all = std::make_unique<OffsetDataset>(
        std::make_unique<SyntheticDataset>(shape, arch.num_classes, dc.synthetic_size + eval_size, seed),
        dc.synthetic_size, eval_size);
  } else {  // shards
    auto train = ShardDataset::Open(dc.path, "train");
    if (!train.ok()) return train.status();
    auto eval = ShardDataset::Open(dc.path, "eval");
    if (!eval.ok()) return eval.status();
    d.train_all = std::move(*train);
    d.eval_all = std::move(*eval);
  }
  return absl::OkStatus();
}

// A data error (FailedPrecondition), never InvalidArgument: the spec is valid, this data does not fit it.
absl::Status CheckFitsModel(const DataConfig& dc, const ModelArch& arch, const Dataset& train) {
  const ImageShape s = train.shape();
  if (s.channels != arch.in_chans || s.height != arch.img_size || s.width != arch.img_size) {
    return absl::FailedPreconditionError(
        absl::StrCat("dataset ", dc.dataset, " has ", s.channels, "x", s.height, "x", s.width, " images but ",
                     arch.name, " expects ", arch.in_chans, "x", arch.img_size, "x", arch.img_size,
                     " (set model.in_chans / model.img_size)"));
  }
  if (train.num_classes() > arch.num_classes) {
    return absl::FailedPreconditionError(absl::StrCat("dataset ", dc.dataset, " has ", train.num_classes(),
                                                      " classes but the model head has ", arch.num_classes,
                                                      " (set model.num_classes)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RunData> LoadRunData(const ExperimentConfig& config, const ModelArch& arch) {
  const DataConfig& data = config.data;
  if (absl::Status spec = CheckDataSpec(data); !spec.ok()) return spec;
  RunData d;
  const absl::Status opened = IsStoredImageDataset(data.dataset) ? OpenStoredSplits(config, d)
                                                                 : OpenSplits(data, config.seed, arch, d);
  if (IsStoredImageDataset(data.dataset) && absl::IsInvalidArgument(opened))
    return opened;  // The spec's transforms.
  if (!opened.ok()) {
    // A reader's InvalidArgument (a malformed file) is the data's fault, not the spec's.
    if (opened.code() == absl::StatusCode::kInvalidArgument) return absl::DataLossError(opened.message());
    return opened;
  }
  if (absl::Status fits = CheckFitsModel(data, arch, *d.train_all); !fits.ok()) return fits;
  d.train = std::make_unique<SubsetDataset>(d.train_all.get(), data.train_subset);
  d.eval = std::make_unique<SubsetDataset>(d.eval_all.get(), data.eval_subset);
  if (!IsStoredImageDataset(data.dataset)) {
    std::vector<double> mean, std;
    FixedSizeDatasetNormalization(data.dataset, &mean, &std);
    d.norm = Normalization{{mean.begin(), mean.end()}, {std.begin(), std.end()}};
  }
  return d;
}

}  // namespace nmsparse
