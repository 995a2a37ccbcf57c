#include "worker/trainer/data/run_data.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/trainer/data/idx_reader.h"
#include "worker/trainer/data/shard_dataset.h"
#include "worker/trainer/data/synthetic_dataset.h"

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
  if (dc.dataset != "fashion_mnist" && dc.dataset != "synthetic" && dc.dataset != "shards")
    return absl::InvalidArgumentError(absl::StrCat("data.dataset: unknown dataset '", dc.dataset, "'"));
  if (dc.dataset == "shards" && dc.path.empty())
    return absl::InvalidArgumentError("data.path: the shards dataset needs a directory");
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

absl::StatusOr<RunData> LoadRunData(const DataConfig& data, uint64_t seed, const ModelArch& arch) {
  if (absl::Status spec = CheckDataSpec(data); !spec.ok()) return spec;
  RunData d;
  if (absl::Status opened = OpenSplits(data, seed, arch, d); !opened.ok()) {
    // A reader's InvalidArgument (a malformed file) is the data's fault, not the spec's.
    if (opened.code() == absl::StatusCode::kInvalidArgument) return absl::DataLossError(opened.message());
    return opened;
  }
  if (absl::Status fits = CheckFitsModel(data, arch, *d.train_all); !fits.ok()) return fits;
  d.train = std::make_unique<SubsetDataset>(d.train_all.get(), data.train_subset);
  d.eval = std::make_unique<SubsetDataset>(d.eval_all.get(), data.eval_subset);
  d.norm = DefaultNormalization(data.dataset);
  return d;
}

}  // namespace nmsparse
