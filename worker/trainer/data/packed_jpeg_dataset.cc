#include "worker/trainer/data/packed_jpeg_dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "worker/trainer/data/directory_listing.h"
#include "worker/trainer/data/jpeg_image_source.h"
#include "worker/trainer/data/packed_jpeg_format.h"

namespace nmsparse {

// A shard mapped read-only; sources of its records keep it alive.
struct PackedJpegDataset::Mapping {
  std::string path;
  const uint8_t* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data != nullptr) munmap(const_cast<uint8_t*>(data), size);
  }
};

namespace {

std::vector<std::string> PackedShards(const std::string& dir, const std::string& split) {
  std::vector<std::string> files;
  for (const std::string& name : SortedNames(dir)) {
    if (IsPackedShardOf(name, split)) files.push_back(dir + "/" + name);
  }
  return files;
}

// The lines of [begin, end), each ended by '\n'; false when the last one is not.
bool Lines(const uint8_t* begin, const uint8_t* end, std::vector<std::string>* lines) {
  if (begin == end) return true;
  if (end[-1] != '\n') return false;
  *lines = absl::StrSplit(absl::string_view(reinterpret_cast<const char*>(begin), end - begin - 1), '\n');
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PackedJpegDataset>> PackedJpegDataset::Open(const std::string& dir,
                                                                           const std::string& split) {
  const auto files = PackedShards(dir, split);
  if (files.empty())
    return absl::NotFoundError(absl::StrCat("no ", split, "-*", kPackedJpegSuffix, " files in ", dir));
  std::unique_ptr<PackedJpegDataset> ds(new PackedJpegDataset());
  for (const auto& path : files) {
    auto bad = [&path](const std::string& why) { return absl::DataLossError(absl::StrCat(path, ": ", why)); };
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    struct stat st;
    fstat(fd, &st);
    auto mapping = std::make_shared<Mapping>();
    mapping->path = path;
    mapping->size = static_cast<size_t>(st.st_size);
    if (mapping->size >= kPackedJpegHeaderBytes) {
      void* p = mmap(nullptr, mapping->size, PROT_READ, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) mapping->data = static_cast<const uint8_t*>(p);
    }
    close(fd);
    const uint8_t* h = mapping->data;
    if (h == nullptr || std::memcmp(h, kPackedJpegMagic, 8) != 0)
      return bad("not a packed JPEG shard (magic)");
    const uint64_t num_classes = GetLe(h + 8, 4), count = GetLe(h + 16, 8), index_offset = GetLe(h + 24, 8),
                   classes_offset = GetLe(h + 32, 8), names_offset = GetLe(h + 40, 8),
                   file_size = GetLe(h + 48, 8);
    if (file_size != mapping->size || index_offset < kPackedJpegHeaderBytes || index_offset > file_size ||
        count > (file_size - index_offset) / kPackedJpegIndexEntryBytes ||
        classes_offset != index_offset + count * kPackedJpegIndexEntryBytes ||
        names_offset < classes_offset || names_offset > file_size) {
      return bad(absl::StrCat("header does not match the file (", mapping->size, " bytes): truncated?"));
    }
    std::vector<std::string> classes, names;
    if (!Lines(h + classes_offset, h + names_offset, &classes) || classes.size() != num_classes ||
        !Lines(h + names_offset, h + file_size, &names) || names.size() != count) {
      return bad("class or record names do not match the header");
    }
    if (ds->shards_.empty()) {
      ds->classes_ = classes;
    } else if (classes != ds->classes_) {
      return bad(absl::StrCat("classes differ from ", files[0], "'s"));
    }
    const int shard = static_cast<int>(ds->shards_.size());
    for (uint64_t i = 0; i < count; ++i) {
      const uint8_t* e = h + index_offset + i * kPackedJpegIndexEntryBytes;
      Record r{shard,
               GetLe(e, 8),
               static_cast<uint32_t>(GetLe(e + 8, 4)),
               static_cast<int32_t>(GetLe(e + 12, 4)),
               static_cast<int64_t>(i),
               std::move(names[i])};
      if (r.offset < kPackedJpegHeaderBytes || r.offset + r.size > index_offset) {
        return bad(absl::StrCat("record ", i, " lies outside the records"));
      }
      if (r.label < 0 || static_cast<uint64_t>(r.label) >= num_classes) {
        return bad(absl::StrCat("record ", i, " has label ", r.label, " outside [0, ", num_classes, ")"));
      }
      ds->records_.push_back(std::move(r));
    }
    ds->shards_.push_back(std::move(mapping));
  }
  return ds;
}

absl::StatusOr<EncodedSample> PackedJpegDataset::Open(int64_t index) const {
  const Record& r = records_[index];
  const auto& shard = shards_[r.shard];
  auto source = JpegImageSource::Open(shard, shard->data + r.offset, r.size, Describe(index));
  if (!source.ok()) return source.status();
  return EncodedSample{*std::move(source), r.label};
}

std::string PackedJpegDataset::Describe(int64_t index) const {
  const Record& r = records_[index];
  return absl::StrCat(shards_[r.shard]->path, " record ", r.record_in_shard, " (", r.name, ")");
}

}  // namespace nmsparse
