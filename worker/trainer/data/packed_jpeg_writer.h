// Writes a split's JPEG files into packed shards (packed_jpeg_format.h), atomically for the whole split: each
// shard is written to `<name>.tmp` and fsynced, and Finish renames them all into place. A reader never sees a
// partial shard or split; a writer that fails or is abandoned (destroyed before Finish) removes its temporary
// files.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_PACKED_JPEG_WRITER_H_
#define NMSPARSE_WORKER_TRAINER_DATA_PACKED_JPEG_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace nmsparse {

class PackedJpegWriter {
 public:
  PackedJpegWriter(std::string dir, std::string split, std::vector<std::string> classes,
                   int64_t images_per_shard);
  ~PackedJpegWriter();
  PackedJpegWriter(const PackedJpegWriter&) = delete;
  PackedJpegWriter& operator=(const PackedJpegWriter&) = delete;

  // Appends one encoded image. `name` (its source, for messages) must not contain a newline.
  // InvalidArgument for a label outside the classes; FailedPrecondition when the directory already holds
  // shards of the split (they would mix); DataLoss when the disk write fails.
  absl::Status Add(const std::string& jpeg, int64_t label, const std::string& name);
  absl::Status Finish();  // Completes the last shard and renames the split's shards into place.
  int64_t written() const { return written_; }
  int shards() const { return shard_index_; }

 private:
  struct IndexEntry {
    uint64_t offset;
    uint32_t size;
    int32_t label;
  };
  absl::Status StartShard();
  absl::Status CompleteShard();
  void Abandon();
  std::string ShardPath(int index) const;
  std::string dir_, split_;
  std::vector<std::string> classes_;
  int64_t per_shard_;
  int shard_index_ = 0;  // Shards completed.
  bool finished_ = false;
  int64_t written_ = 0;
  std::string tmp_;
  std::FILE* file_ = nullptr;
  uint64_t offset_ = 0;
  std::vector<IndexEntry> index_;
  std::string names_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_PACKED_JPEG_WRITER_H_
