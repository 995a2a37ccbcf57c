// Reads every packed JPEG shard of one split (packed_jpeg_format.h). Shards are memory-mapped: records are
// read in place, sequentially fast, and the index and names are checked once when opened.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_PACKED_JPEG_DATASET_H_
#define NMSPARSE_WORKER_TRAINER_DATA_PACKED_JPEG_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/trainer/data/encoded_dataset.h"

namespace nmsparse {

class PackedJpegDataset : public EncodedDataset {
 public:
  // NotFound when `dir` has no `<split>-*.nmjpeg`; DataLoss naming the shard when one is malformed or its
  // classes differ from the first shard's.
  static absl::StatusOr<std::unique_ptr<PackedJpegDataset>> Open(const std::string& dir,
                                                                 const std::string& split);

  int64_t size() const override { return static_cast<int64_t>(records_.size()); }
  int num_classes() const override { return static_cast<int>(classes_.size()); }
  absl::StatusOr<EncodedSample> Open(int64_t index) const override;
  // "<shard> record <i> (<source name>)".
  std::string Describe(int64_t index) const override;
  const std::vector<std::string>& classes() const { return classes_; }

 private:
  struct Mapping;
  struct Record {
    int shard;
    uint64_t offset;
    uint32_t size;
    int32_t label;
    int64_t record_in_shard;
    std::string name;
  };
  PackedJpegDataset() = default;
  std::vector<std::shared_ptr<const Mapping>> shards_;
  std::vector<Record> records_;
  std::vector<std::string> classes_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_PACKED_JPEG_DATASET_H_
