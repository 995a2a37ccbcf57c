#include "worker/trainer/data/packed_jpeg_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "worker/trainer/data/directory_listing.h"
#include "worker/trainer/data/packed_jpeg_format.h"

namespace nmsparse {

PackedJpegWriter::PackedJpegWriter(std::string dir, std::string split, std::vector<std::string> classes,
                                   int64_t images_per_shard)
    : dir_(std::move(dir)),
      split_(std::move(split)),
      classes_(std::move(classes)),
      per_shard_(std::max<int64_t>(images_per_shard, 1)) {}

PackedJpegWriter::~PackedJpegWriter() { Abandon(); }

std::string PackedJpegWriter::ShardPath(int index) const {
  return absl::StrFormat("%s/%s-%05d%s", dir_, split_, index, kPackedJpegSuffix);
}

// Removes the shard being written and the completed ones not yet renamed.
void PackedJpegWriter::Abandon() {
  if (finished_) return;
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  for (int i = 0; i <= shard_index_; ++i) std::remove((ShardPath(i) + ".tmp").c_str());
  shard_index_ = 0;
}

absl::Status PackedJpegWriter::StartShard() {
  if (shard_index_ == 0) {
    for (const std::string& name : SortedNames(dir_)) {
      if (IsPackedShardOf(name, split_)) {
        return absl::FailedPreconditionError(absl::StrCat(dir_, " already holds ", split_, "-*",
                                                          kPackedJpegSuffix,
                                                          " shards: remove them or write elsewhere"));
      }
    }
  }
  tmp_ = ShardPath(shard_index_) + ".tmp";
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (file_ == nullptr)
    return absl::PermissionDeniedError(absl::StrCat("cannot write ", tmp_, ": ", std::strerror(errno)));
  const uint8_t zeros[kPackedJpegHeaderBytes] = {};  // The header is written when the shard is complete.
  offset_ = kPackedJpegHeaderBytes;
  index_.clear();
  names_.clear();
  if (std::fwrite(zeros, 1, sizeof(zeros), file_) != sizeof(zeros)) {
    Abandon();
    return absl::DataLossError(absl::StrCat("failed writing ", tmp_));
  }
  return absl::OkStatus();
}

absl::Status PackedJpegWriter::Add(const std::string& jpeg, int64_t label, const std::string& name) {
  if (label < 0 || label >= static_cast<int64_t>(classes_.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": label ", label, " outside [0, ", classes_.size(), ")"));
  }
  if (name.find('\n') != std::string::npos || jpeg.size() > UINT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": a name with a newline, or over 4 GiB"));
  }
  if (file_ == nullptr) {
    if (auto s = StartShard(); !s.ok()) return s;
  }
  if (std::fwrite(jpeg.data(), 1, jpeg.size(), file_) != jpeg.size()) {
    Abandon();
    return absl::DataLossError(absl::StrCat("failed writing ", tmp_, ": ", std::strerror(errno)));
  }
  index_.push_back({offset_, static_cast<uint32_t>(jpeg.size()), static_cast<int32_t>(label)});
  offset_ += jpeg.size();
  absl::StrAppend(&names_, name, "\n");
  ++written_;
  if (static_cast<int64_t>(index_.size()) == per_shard_) return CompleteShard();
  return absl::OkStatus();
}

absl::Status PackedJpegWriter::Finish() {
  if (file_ != nullptr) {
    if (auto s = CompleteShard(); !s.ok()) return s;
  }
  for (int i = 0; i < shard_index_; ++i) {
    const std::string path = ShardPath(i), tmp = path + ".tmp";
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      Abandon();
      return absl::DataLossError(absl::StrCat("cannot rename ", tmp, " to ", path, ": ", why));
    }
  }
  // The renames are durable once the directory is synced.
  if (const int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  finished_ = true;
  return absl::OkStatus();
}

absl::Status PackedJpegWriter::CompleteShard() {
  std::string tail(index_.size() * kPackedJpegIndexEntryBytes, '\0');
  auto* entry = reinterpret_cast<uint8_t*>(tail.data());
  for (const auto& e : index_) {
    PutLe(entry, e.offset, 8);
    PutLe(entry + 8, e.size, 4);
    PutLe(entry + 12, static_cast<uint32_t>(e.label), 4);
    entry += kPackedJpegIndexEntryBytes;
  }
  const uint64_t index_offset = offset_;
  const uint64_t classes_offset = index_offset + tail.size();
  for (const auto& c : classes_) absl::StrAppend(&tail, c, "\n");
  const uint64_t names_offset = index_offset + tail.size();
  tail += names_;
  const uint64_t file_size = index_offset + tail.size();
  uint8_t header[kPackedJpegHeaderBytes] = {};
  std::memcpy(header, kPackedJpegMagic, 8);
  PutLe(header + 8, classes_.size(), 4);
  PutLe(header + 16, index_.size(), 8);
  PutLe(header + 24, index_offset, 8);
  PutLe(header + 32, classes_offset, 8);
  PutLe(header + 40, names_offset, 8);
  PutLe(header + 48, file_size, 8);
  const bool written = std::fwrite(tail.data(), 1, tail.size(), file_) == tail.size() &&
                       std::fseek(file_, 0, SEEK_SET) == 0 &&
                       std::fwrite(header, 1, sizeof(header), file_) == sizeof(header) &&
                       std::fflush(file_) == 0 && fsync(fileno(file_)) == 0;
  if (!written) {
    const std::string why = std::strerror(errno);
    Abandon();
    return absl::DataLossError(absl::StrCat("failed writing ", tmp_, ": ", why));
  }
  std::fclose(file_);
  file_ = nullptr;
  ++shard_index_;
  return absl::OkStatus();
}

}  // namespace nmsparse
