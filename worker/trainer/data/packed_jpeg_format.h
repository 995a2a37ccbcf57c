// nmsparse's packed JPEG format (docs/data-format.md): a dataset directory holds `<split>-NNNNN.nmjpeg`
// files, each read sequentially or by record. Each file, little-endian:
//   header (64 bytes): magic "NMJPEG01" | uint32 num_classes | uint32 0 | uint64 count | uint64 index_offset
//   |
//                      uint64 classes_offset | uint64 names_offset | uint64 file_size | 8 zero bytes
//   records:  the encoded JPEG files, back to back, from byte 64 to index_offset
//   index:    count entries of uint64 offset | uint32 size | int32 label (16 bytes), up to classes_offset
//   classes:  the class names, each ended by '\n' (class i is line i), up to names_offset
//   names:    each record's source (its ImageFolder path or tar member), each ended by '\n', to file_size
#ifndef NMSPARSE_WORKER_TRAINER_DATA_PACKED_JPEG_FORMAT_H_
#define NMSPARSE_WORKER_TRAINER_DATA_PACKED_JPEG_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/strings/match.h"

namespace nmsparse {

constexpr char kPackedJpegMagic[8] = {'N', 'M', 'J', 'P', 'E', 'G', '0', '1'};
constexpr int64_t kPackedJpegHeaderBytes = 64;
constexpr int64_t kPackedJpegIndexEntryBytes = 16;
constexpr char kPackedJpegSuffix[] = ".nmjpeg";

// Whether the file `name` is a shard of `split`: "<split>-NNNNN.nmjpeg" (the writer's names).
inline bool IsPackedShardOf(const std::string& name, const std::string& split) {
  return absl::StartsWith(name, split + "-") && absl::EndsWith(name, kPackedJpegSuffix);
}

inline void PutLe(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint64_t GetLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_PACKED_JPEG_FORMAT_H_
