// Reading a PEM file (certificate, key or CA) named by a flag, for gRPC's SSL credentials on both ends.
#ifndef NMSPARSE_COMMON_PEM_FILE_H_
#define NMSPARSE_COMMON_PEM_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace nmsparse {

// The file's text. InvalidArgument "SOURCE: cannot read PATH" when it is missing, unreadable or empty, and
// "SOURCE: PATH is not a PEM file ..." when it holds no PEM block (checked before gRPC sees it);
// `source` is the flag or variable that named it.
absl::StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& source);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_PEM_FILE_H_
