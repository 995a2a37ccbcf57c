// Reading and writing safetensors files (worker/trainer/interop/safetensors_header.h has the format) as
// LibTorch tensors: F32, F16, BF16 and F64.
#ifndef NMSPARSE_WORKER_TRAINER_INTEROP_SAFETENSORS_H_
#define NMSPARSE_WORKER_TRAINER_INTEROP_SAFETENSORS_H_

#include <torch/types.h>

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker/sparsity/sparsity_method.h"  // NamedTensors

namespace nmsparse {

struct SafetensorsContents {
  NamedTensors tensors;  // CPU, contiguous, the file's dtypes; by name.
  std::map<std::string, std::string> metadata;
};

// Every tensor of `path`. InvalidArgument naming the file for a damaged or hostile file (every check of
// ParseSafetensorsHeader, and a file that shrinks while it is read), NotFound when it cannot be opened.
absl::StatusOr<SafetensorsContents> ReadSafetensors(const std::string& path);

// The same of a file's `bytes` already in memory (read once, e.g. while hashing them); `path` names it in
// errors.
absl::StatusOr<SafetensorsContents> ReadSafetensorsBytes(absl::string_view bytes, const std::string& path);

// Writes `tensors` (any device; F32, F16, BF16 or F64) in their order, with `metadata`, to `path`
// atomically (a temporary file renamed). InvalidArgument for another dtype, Internal when writing fails.
absl::Status WriteSafetensors(const std::string& path, const NamedTensors& tensors,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_INTEROP_SAFETENSORS_H_
