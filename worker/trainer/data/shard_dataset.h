// nmsparse's image shard format (docs/data-format.md): a dataset directory holds `<split>-NNNNN.nmshard`
// files (split "train" or "eval"). Each file: a 64-byte little-endian header
//   magic "NMSHARD1" | uint32 channels | uint32 height | uint32 width | uint32 num_classes | uint64 count |
//   32 zero bytes
// then `count` int32 labels, then `count` uint8 images of channels*height*width bytes, channel-major (CHW).
#ifndef NMSPARSE_WORKER_TRAINER_DATA_SHARD_DATASET_H_
#define NMSPARSE_WORKER_TRAINER_DATA_SHARD_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/trainer/data/dataset.h"

namespace nmsparse {

constexpr char kShardMagic[8] = {'N', 'M', 'S', 'H', 'A', 'R', 'D', '1'};
constexpr int64_t kShardHeaderBytes = 64;

// Reads every shard of one split; images are read from disk on demand (pread), labels are held in memory.
class ShardDataset : public Dataset {
 public:
  // NotFound when the directory has no shard of `split`; DataLoss on a malformed or inconsistent shard.
  static absl::StatusOr<std::unique_ptr<ShardDataset>> Open(const std::string& dir, const std::string& split);
  ~ShardDataset() override;

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  ImageShape shape() const override { return shape_; }
  int num_classes() const override { return num_classes_; }
  int64_t Read(int64_t index, uint8_t* pixels) const override;

 private:
  struct Shard {
    int fd = -1;
    int64_t first = 0;  // Index of its first image in the dataset.
    int64_t count = 0;
  };
  ShardDataset() = default;
  ImageShape shape_;
  int num_classes_ = 0;
  std::vector<Shard> shards_;
  std::vector<int64_t> labels_;
};

// Writes images of one split into shards of at most `images_per_shard` images; each shard is written to a
// temporary file and renamed when complete.
class ShardWriter {
 public:
  ShardWriter(std::string dir, std::string split, ImageShape shape, int num_classes,
              int64_t images_per_shard);
  absl::Status Add(const uint8_t* pixels, int64_t label);
  absl::Status Finish();  // Flushes the last shard.
  int64_t written() const { return written_; }

 private:
  absl::Status Flush();
  std::string dir_, split_;
  ImageShape shape_;
  int num_classes_;
  int64_t per_shard_;
  int shard_index_ = 0;
  int64_t written_ = 0;
  std::vector<int32_t> labels_;
  std::vector<uint8_t> pixels_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_SHARD_DATASET_H_
