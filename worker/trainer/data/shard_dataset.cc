#include "worker/trainer/data/shard_dataset.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "worker/trainer/data/directory_listing.h"

namespace nmsparse {
namespace {

void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void PutU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t GetU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

bool PreadAll(int fd, void* out, int64_t n, int64_t offset) {
  auto* p = static_cast<uint8_t*>(out);
  while (n > 0) {
    const ssize_t got = pread(fd, p, n, offset);
    if (got <= 0) return false;
    p += got;
    n -= got;
    offset += got;
  }
  return true;
}

std::vector<std::string> ShardFiles(const std::string& dir, const std::string& split) {
  std::vector<std::string> files;
  for (const std::string& name : SortedNames(dir)) {
    if (absl::StartsWith(name, split + "-") && absl::EndsWith(name, ".nmshard"))
      files.push_back(dir + "/" + name);
  }
  return files;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ShardDataset>> ShardDataset::Open(const std::string& dir,
                                                                 const std::string& split) {
  const auto files = ShardFiles(dir, split);
  if (files.empty()) {
    return absl::NotFoundError(absl::StrCat("no ", split, "-*.nmshard files in ", dir));
  }
  std::unique_ptr<ShardDataset> ds(new ShardDataset());
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open shard ", path));
    ds->shards_.push_back({fd, ds->size(), 0});
    uint8_t header[kShardHeaderBytes];
    if (!PreadAll(fd, header, kShardHeaderBytes, 0) || std::memcmp(header, kShardMagic, 8) != 0) {
      return absl::DataLossError(absl::StrCat(path, ": not an nmsparse shard (bad magic or short header)"));
    }
    ImageShape shape{static_cast<int>(GetU32(header + 8)), static_cast<int>(GetU32(header + 12)),
                     static_cast<int>(GetU32(header + 16))};
    const int num_classes = static_cast<int>(GetU32(header + 20));
    const int64_t count = static_cast<int64_t>(GetU64(header + 24));
    if (i == 0) {
      ds->shape_ = shape;
      ds->num_classes_ = num_classes;
    } else if (shape.channels != ds->shape_.channels || shape.height != ds->shape_.height ||
               shape.width != ds->shape_.width || num_classes != ds->num_classes_) {
      return absl::DataLossError(absl::StrCat(path, ": image shape or class count differs from ", files[0]));
    }
    std::vector<int32_t> labels(count);
    if (!PreadAll(fd, labels.data(), count * 4, kShardHeaderBytes)) {
      return absl::DataLossError(absl::StrCat(path, ": truncated labels"));
    }
    const int64_t expected_size = kShardHeaderBytes + count * 4 + count * shape.numel();
    if (lseek(fd, 0, SEEK_END) != expected_size) {
      return absl::DataLossError(absl::StrCat(path, ": size is not header + labels + ", count, " images"));
    }
    for (int32_t label : labels) {
      if (label < 0 || label >= num_classes) {
        return absl::DataLossError(absl::StrCat(path, ": label ", label, " outside [0, ", num_classes, ")"));
      }
      ds->labels_.push_back(label);
    }
    ds->shards_.back().count = count;
  }
  return ds;
}

ShardDataset::~ShardDataset() {
  for (const auto& s : shards_) close(s.fd);
}

int64_t ShardDataset::Read(int64_t index, uint8_t* pixels) const {
  auto it = std::upper_bound(shards_.begin(), shards_.end(), index,
                             [](int64_t i, const Shard& s) { return i < s.first; });
  const Shard& shard = *(it - 1);
  const int64_t n = shape_.numel();
  const int64_t offset = kShardHeaderBytes + shard.count * 4 + (index - shard.first) * n;
  if (!PreadAll(shard.fd, pixels, n, offset)) {
    throw std::runtime_error(absl::StrCat("short read of image ", index, " from a shard"));
  }
  return labels_[index];
}

ShardWriter::ShardWriter(std::string dir, std::string split, ImageShape shape, int num_classes,
                         int64_t images_per_shard)
    : dir_(std::move(dir)),
      split_(std::move(split)),
      shape_(shape),
      num_classes_(num_classes),
      per_shard_(std::max<int64_t>(images_per_shard, 1)) {}

absl::Status ShardWriter::Add(const uint8_t* pixels, int64_t label) {
  if (label < 0 || label >= num_classes_) {
    return absl::InvalidArgumentError(absl::StrCat("label ", label, " outside [0, ", num_classes_, ")"));
  }
  labels_.push_back(static_cast<int32_t>(label));
  pixels_.insert(pixels_.end(), pixels, pixels + shape_.numel());
  ++written_;
  if (static_cast<int64_t>(labels_.size()) == per_shard_) return Flush();
  return absl::OkStatus();
}

absl::Status ShardWriter::Finish() { return labels_.empty() ? absl::OkStatus() : Flush(); }

absl::Status ShardWriter::Flush() {
  const std::string path = absl::StrFormat("%s/%s-%05d.nmshard", dir_, split_, shard_index_++);
  const std::string tmp = path + ".tmp";
  uint8_t header[kShardHeaderBytes] = {};
  std::memcpy(header, kShardMagic, 8);
  PutU32(header + 8, shape_.channels);
  PutU32(header + 12, shape_.height);
  PutU32(header + 16, shape_.width);
  PutU32(header + 20, num_classes_);
  PutU64(header + 24, labels_.size());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return absl::PermissionDeniedError(absl::StrCat("cannot write ", tmp));
  std::vector<uint8_t> label_bytes(labels_.size() * 4);
  for (size_t i = 0; i < labels_.size(); ++i) PutU32(label_bytes.data() + 4 * i, labels_[i]);
  const bool ok = std::fwrite(header, 1, sizeof(header), f) == sizeof(header) &&
                  std::fwrite(label_bytes.data(), 1, label_bytes.size(), f) == label_bytes.size() &&
                  std::fwrite(pixels_.data(), 1, pixels_.size(), f) == pixels_.size();
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::DataLossError(absl::StrCat("failed writing shard ", path));
  }
  labels_.clear();
  pixels_.clear();
  return absl::OkStatus();
}

}  // namespace nmsparse
