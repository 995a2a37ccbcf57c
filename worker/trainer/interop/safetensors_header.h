// The header of a safetensors file (https://github.com/huggingface/safetensors, the format timm and Hugging
// Face save models in): an 8-byte little-endian header length, a JSON header naming every tensor's dtype,
// shape and data_offsets (relative to the data that follows the header) plus an optional "__metadata__" map
// of strings, then the raw bytes. Debian packages no C++ safetensors library, so this is a small one on
// nlohmann-json. Plain C++ (no LibTorch), so that fuzz/safetensors_header_fuzzer reaches every check.
#ifndef NMSPARSE_WORKER_TRAINER_INTEROP_SAFETENSORS_HEADER_H_
#define NMSPARSE_WORKER_TRAINER_INTEROP_SAFETENSORS_HEADER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace nmsparse {

// The dtypes nmsparse reads and writes (safetensors' names); others are refused by name.
enum class SafetensorsDtype { kF64, kF32, kF16, kBF16 };

std::string SafetensorsDtypeName(SafetensorsDtype dtype);
int64_t SafetensorsDtypeSize(SafetensorsDtype dtype);

struct SafetensorsEntry {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // Byte offsets into the data section, [begin, end).
  uint64_t end = 0;
};

struct SafetensorsHeader {
  uint64_t data_start = 0;                // 8 + the header's length: where offset 0 of the data is.
  std::vector<SafetensorsEntry> entries;  // By name.
  std::map<std::string, std::string> metadata;
};

// The most header bytes a file may declare (the safetensors library's own limit).
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// The header's length from the file's first 8 bytes (`prefix`), checked against `file_size`.
// InvalidArgument naming `file` when the file is shorter than 8 bytes or the header runs past its end.
absl::StatusOr<uint64_t> SafetensorsHeaderLength(std::string_view prefix, uint64_t file_size,
                                                 const std::string& file);

// Parses and checks `head` (the file's first 8 + header-length bytes) of a file of `file_size` bytes:
// InvalidArgument naming `file` and the tensor for a truncated file, a header past the end, JSON that is not
// an object of tensors, an unknown dtype, a negative or overflowing shape, offsets out of order or past the
// end, offsets that overlap another tensor's, or a byte size that disagrees with dtype and shape. Never
// throws.
absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view head, uint64_t file_size,
                                                         const std::string& file);

// The header bytes (8-byte length, JSON padded with spaces to a multiple of 8, as the safetensors library
// writes) for `entries` laid out back to back in their order; sets each entry's offsets.
std::string SafetensorsHeaderBytes(std::vector<SafetensorsEntry>& entries,
                                   const std::map<std::string, std::string>& metadata);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_INTEROP_SAFETENSORS_HEADER_H_
