// Fuzzes the safetensors header parser with any bytes as a whole file: it refuses with a message or returns
// entries whose offsets lie inside the file, agree with dtype and shape, and do not overlap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "worker/trainer/interop/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  const auto header = nmsparse::ParseSafetensorsHeader(file, size, "fuzz.safetensors");
  if (!header.ok()) {
    FUZZ_CHECK(!header.status().message().empty(), "an error without a message");
    return 0;
  }
  FUZZ_CHECK(header->data_start <= size, "data past the end");
  uint64_t covered = 0;
  for (const nmsparse::SafetensorsEntry& e : header->entries) {
    FUZZ_CHECK(e.begin <= e.end && header->data_start + e.end <= size, e.name);
    uint64_t bytes = static_cast<uint64_t>(nmsparse::SafetensorsDtypeSize(e.dtype));
    for (int64_t d : e.shape) bytes *= static_cast<uint64_t>(d);
    FUZZ_CHECK(bytes == e.end - e.begin, e.name);
    covered += e.end - e.begin;
  }
  FUZZ_CHECK(covered <= size - header->data_start, "tensors overlap");
  return 0;
}
