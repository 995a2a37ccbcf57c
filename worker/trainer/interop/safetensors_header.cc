#include "worker/trainer/interop/safetensors_header.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace nmsparse {
namespace {

using nlohmann::json;

constexpr char kMetadataKey[] = "__metadata__";

absl::Status Bad(const std::string& file, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("safetensors file ", file, ": ", what));
}

bool DtypeFromName(const std::string& name, SafetensorsDtype* dtype) {
  for (SafetensorsDtype d :
       {SafetensorsDtype::kF64, SafetensorsDtype::kF32, SafetensorsDtype::kF16, SafetensorsDtype::kBF16}) {
    if (SafetensorsDtypeName(d) == name) {
      *dtype = d;
      return true;
    }
  }
  return false;
}

std::string ShapeText(const std::vector<int64_t>& shape) { return "[" + absl::StrJoin(shape, ", ") + "]"; }

// One tensor's entry; its offsets are checked against `data_size` here, against each other by the caller.
absl::StatusOr<SafetensorsEntry> ParseEntry(const std::string& name, const json& value, uint64_t data_size,
                                            const std::string& file) {
  const std::string where = absl::StrCat("tensor '", name, "'");
  if (!value.is_object()) return Bad(file, where + " is not a JSON object");
  SafetensorsEntry entry;
  entry.name = name;
  const auto dtype = value.find("dtype");
  if (dtype == value.end() || !dtype->is_string()) return Bad(file, where + " has no dtype string");
  if (!DtypeFromName(dtype->get<std::string>(), &entry.dtype)) {
    return Bad(file, absl::StrCat(where, " has dtype '", dtype->get<std::string>(),
                                  "', not one of F64, F32, F16, BF16"));
  }
  const auto shape = value.find("shape");
  if (shape == value.end() || !shape->is_array()) return Bad(file, where + " has no shape list");
  uint64_t numel = 1;
  for (const json& dim : *shape) {
    if (!dim.is_number_unsigned() || dim.get<uint64_t>() > static_cast<uint64_t>(1) << 62) {
      return Bad(file, absl::StrCat(where, " has shape entry ", dim.dump(), ", not a size >= 0"));
    }
    const uint64_t d = dim.get<uint64_t>();
    if (d != 0 && numel > std::numeric_limits<uint64_t>::max() / 8 / d) {
      return Bad(file, where + " has a shape whose size overflows");
    }
    numel *= d;
    entry.shape.push_back(static_cast<int64_t>(d));
  }
  const auto offsets = value.find("data_offsets");
  if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
    return Bad(file, where + " has no data_offsets [begin, end]");
  }
  entry.begin = (*offsets)[0].get<uint64_t>();
  entry.end = (*offsets)[1].get<uint64_t>();
  if (entry.begin > entry.end || entry.end > data_size) {
    return Bad(file, absl::StrCat(where, " has data_offsets [", entry.begin, ", ", entry.end,
                                  "] outside the file's ", data_size, " data bytes (truncated?)"));
  }
  const uint64_t bytes = numel * static_cast<uint64_t>(SafetensorsDtypeSize(entry.dtype));
  if (bytes != entry.end - entry.begin) {
    return Bad(file, absl::StrCat(where, " of dtype ", SafetensorsDtypeName(entry.dtype), " and shape ",
                                  ShapeText(entry.shape), " needs ", bytes,
                                  " bytes, but its data_offsets span ", entry.end - entry.begin));
  }
  return entry;
}

absl::StatusOr<std::map<std::string, std::string>> ParseMetadata(const json& value, const std::string& file) {
  if (!value.is_object()) return Bad(file, "__metadata__ is not a JSON object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, text] : value.items()) {
    if (!text.is_string()) return Bad(file, absl::StrCat("__metadata__ key '", key, "' is not a string"));
    metadata[key] = text.get<std::string>();
  }
  return metadata;
}

// No two tensors share a byte (tensors of zero bytes share none).
absl::Status CheckNoOverlap(std::vector<SafetensorsEntry> entries, const std::string& file) {
  std::sort(entries.begin(), entries.end(),
            [](const SafetensorsEntry& a, const SafetensorsEntry& b) { return a.begin < b.begin; });
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry& e : entries) {
    if (e.begin == e.end) continue;
    if (previous != nullptr && e.begin < previous->end) {
      return Bad(file, absl::StrCat("tensors '", previous->name, "' [", previous->begin, ", ", previous->end,
                                    ") and '", e.name, "' [", e.begin, ", ", e.end, ") overlap"));
    }
    previous = &e;
  }
  return absl::OkStatus();
}

}  // namespace

std::string SafetensorsDtypeName(SafetensorsDtype dtype) {
  switch (dtype) {
    case SafetensorsDtype::kF64:
      return "F64";
    case SafetensorsDtype::kF32:
      return "F32";
    case SafetensorsDtype::kF16:
      return "F16";
    case SafetensorsDtype::kBF16:
      return "BF16";
  }
  return "?";
}

int64_t SafetensorsDtypeSize(SafetensorsDtype dtype) {
  switch (dtype) {
    case SafetensorsDtype::kF64:
      return 8;
    case SafetensorsDtype::kF32:
      return 4;
    case SafetensorsDtype::kF16:
    case SafetensorsDtype::kBF16:
      return 2;
  }
  return 1;
}

absl::StatusOr<uint64_t> SafetensorsHeaderLength(std::string_view prefix, uint64_t file_size,
                                                 const std::string& file) {
  if (prefix.size() < 8 || file_size < 8) {
    return Bad(file, absl::StrCat("truncated: ", file_size, " bytes, shorter than the 8-byte header length"));
  }
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(prefix[i]);
  if (length > file_size - 8) {
    return Bad(file, absl::StrCat("the header's length ", length, " runs past the end of the file (",
                                  file_size, " bytes): truncated or not a safetensors file"));
  }
  if (length > kMaxSafetensorsHeaderBytes) {
    return Bad(file, absl::StrCat("the header's length ", length, " is over the limit of ",
                                  kMaxSafetensorsHeaderBytes, " bytes"));
  }
  return length;
}

absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view head, uint64_t file_size,
                                                         const std::string& file) {
  absl::StatusOr<uint64_t> length = SafetensorsHeaderLength(head, file_size, file);
  if (!length.ok()) return length.status();
  if (head.size() < 8 + *length) return Bad(file, "truncated inside its header");
  const json root = json::parse(head.substr(8, *length), /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return Bad(file, "the header is not a JSON object");
  SafetensorsHeader header;
  header.data_start = 8 + *length;
  const uint64_t data_size = file_size - header.data_start;
  for (const auto& [name, value] : root.items()) {
    if (name == kMetadataKey) {
      absl::StatusOr<std::map<std::string, std::string>> metadata = ParseMetadata(value, file);
      if (!metadata.ok()) return metadata.status();
      header.metadata = std::move(*metadata);
      continue;
    }
    absl::StatusOr<SafetensorsEntry> entry = ParseEntry(name, value, data_size, file);
    if (!entry.ok()) return entry.status();
    header.entries.push_back(std::move(*entry));
  }
  if (absl::Status s = CheckNoOverlap(header.entries, file); !s.ok()) return s;
  return header;
}

std::string SafetensorsHeaderBytes(std::vector<SafetensorsEntry>& entries,
                                   const std::map<std::string, std::string>& metadata) {
  json root = json::object();
  if (!metadata.empty()) root[kMetadataKey] = metadata;
  uint64_t offset = 0;
  for (SafetensorsEntry& e : entries) {
    uint64_t bytes = static_cast<uint64_t>(SafetensorsDtypeSize(e.dtype));
    for (int64_t d : e.shape) bytes *= static_cast<uint64_t>(d);
    e.begin = offset;
    e.end = offset + bytes;
    offset = e.end;
    root[e.name] = {
        {"dtype", SafetensorsDtypeName(e.dtype)}, {"shape", e.shape}, {"data_offsets", {e.begin, e.end}}};
  }
  std::string text = root.dump();
  text.append((8 - (text.size() % 8)) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  return out + text;
}

}  // namespace nmsparse
