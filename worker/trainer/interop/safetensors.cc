#include "worker/trainer/interop/safetensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/trainer/interop/safetensors_header.h"

namespace nmsparse {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian, as this host");

torch::ScalarType ToTorch(SafetensorsDtype dtype) {
  switch (dtype) {
    case SafetensorsDtype::kF64:
      return torch::kFloat64;
    case SafetensorsDtype::kF32:
      return torch::kFloat32;
    case SafetensorsDtype::kF16:
      return torch::kFloat16;
    case SafetensorsDtype::kBF16:
      return torch::kBFloat16;
  }
  return torch::kFloat32;
}

bool FromTorch(torch::ScalarType type, SafetensorsDtype* dtype) {
  switch (type) {
    case torch::kFloat64:
      *dtype = SafetensorsDtype::kF64;
      return true;
    case torch::kFloat32:
      *dtype = SafetensorsDtype::kF32;
      return true;
    case torch::kFloat16:
      *dtype = SafetensorsDtype::kF16;
      return true;
    case torch::kBFloat16:
      *dtype = SafetensorsDtype::kBF16;
      return true;
    default:
      return false;
  }
}

bool ReadAt(std::ifstream& in, uint64_t offset, char* out, uint64_t bytes) {
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(out, static_cast<std::streamsize>(bytes));
  return in.good() || (bytes == 0 && !in.bad());
}

// Every tensor of a file of `file_size` bytes whose bytes `read_at(offset, out, n)` reads (false when it
// cannot): the one parse of a file on disk and of one already in memory.
template <typename ReadAtFn>
absl::StatusOr<SafetensorsContents> ReadContents(uint64_t file_size, const std::string& path,
                                                 const ReadAtFn& read_at) {
  std::string head(std::min<uint64_t>(file_size, 8), '\0');
  if (!read_at(0, head.data(), head.size())) return absl::InvalidArgumentError("cannot read " + path);
  absl::StatusOr<uint64_t> length = SafetensorsHeaderLength(head, file_size, path);
  if (!length.ok()) return length.status();
  head.resize(8 + *length);
  if (!read_at(8, head.data() + 8, *length)) {
    return absl::InvalidArgumentError(absl::StrCat("safetensors file ", path, ": cannot read its header"));
  }
  absl::StatusOr<SafetensorsHeader> header = ParseSafetensorsHeader(head, file_size, path);
  if (!header.ok()) return header.status();
  SafetensorsContents contents;
  contents.metadata = std::move(header->metadata);
  for (const SafetensorsEntry& e : header->entries) {
    torch::Tensor t = torch::empty(e.shape, torch::TensorOptions().dtype(ToTorch(e.dtype)));
    if (!read_at(header->data_start + e.begin, static_cast<char*>(t.data_ptr()), e.end - e.begin)) {
      return absl::InvalidArgumentError(
          absl::StrCat("safetensors file ", path, ": cannot read tensor '", e.name, "' (truncated?)"));
    }
    contents.tensors.emplace_back(e.name, std::move(t));
  }
  return contents;
}

}  // namespace

absl::StatusOr<SafetensorsContents> ReadSafetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open safetensors file ", path));
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  return ReadContents(file_size, path,
                      [&in](uint64_t offset, char* out, uint64_t n) { return ReadAt(in, offset, out, n); });
}

absl::StatusOr<SafetensorsContents> ReadSafetensorsBytes(absl::string_view bytes, const std::string& path) {
  return ReadContents(bytes.size(), path, [bytes](uint64_t offset, char* out, uint64_t n) {
    if (offset > bytes.size() || n > bytes.size() - offset) return false;
    if (n > 0) std::memcpy(out, bytes.data() + offset, n);
    return true;
  });
}

absl::Status WriteSafetensors(const std::string& path, const NamedTensors& tensors,
                              const std::map<std::string, std::string>& metadata) {
  std::vector<SafetensorsEntry> entries;
  std::vector<torch::Tensor> data;
  for (const auto& [name, tensor] : tensors) {
    SafetensorsEntry e;
    e.name = name;
    if (!FromTorch(tensor.scalar_type(), &e.dtype)) {
      return absl::InvalidArgumentError(absl::StrCat("safetensors: tensor '", name, "' has dtype ",
                                                     c10::toString(tensor.scalar_type()),
                                                     ", not float64, float32, float16 or bfloat16"));
    }
    e.shape.assign(tensor.sizes().begin(), tensor.sizes().end());
    entries.push_back(std::move(e));
    data.push_back(tensor.detach().to(torch::kCPU).contiguous());
  }
  const std::string header = SafetensorsHeaderBytes(entries, metadata);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (size_t i = 0; i < data.size(); ++i) {
      out.write(static_cast<const char*>(data[i].data_ptr()),
                static_cast<std::streamsize>(entries[i].end - entries[i].begin));
    }
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::InternalError("cannot write " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace nmsparse
