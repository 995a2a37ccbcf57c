// Reading what nmctl submits: a sweep file (base + axes) or a single experiment file (sent as a sweep without
// axes), with --set key=value overrides applied to the base spec.
#ifndef NMSPARSE_CLI_SPEC_FILE_H_
#define NMSPARSE_CLI_SPEC_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::cli {

// Parses `path` (errors "FILE:LINE: key.path: reason", NotFound for a missing file, InvalidArgument naming
// the size for a file past limits::kMaxSpecFileBytes, refused before it is read) and applies each
// "key.path=value" of `sets` to the base spec (errors "--set key.path=value: reason"). Warnings from the
// parser (accepted but ignored reference keys) are appended to `warnings`.
absl::StatusOr<v1::SweepSpec> LoadSpecFile(const std::string& path, const std::vector<std::string>& sets,
                                           std::vector<std::string>* warnings);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_SPEC_FILE_H_
