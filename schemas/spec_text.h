// Reading a spec file's text (sweep, experiment, base_file), bounded: a file larger than
// limits::kMaxSpecFileBytes is refused from its size, before a byte of it is read or parsed.
#ifndef NMSPARSE_SCHEMAS_SPEC_TEXT_H_
#define NMSPARSE_SCHEMAS_SPEC_TEXT_H_

#include <string>

#include "absl/status/statusor.h"

namespace nmsparse {

// The whole file. NotFound "cannot read PATH" when it cannot be opened; InvalidArgument "PATH: 2,000,000
// bytes, more than the limit of 1,048,576 bytes for a spec file" when it is too large.
absl::StatusOr<std::string> ReadSpecText(const std::string& path);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SPEC_TEXT_H_
