#include "schemas/spec_text.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "schemas/limits.h"

namespace nmsparse {

absl::StatusOr<std::string> ReadSpecText(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && info.st_size > limits::kMaxSpecFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", limits::FormatCount(info.st_size), " bytes, more than the limit of ",
                     limits::FormatCount(limits::kMaxSpecFileBytes), " bytes for a spec file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  // A pipe or device has no size to check first: read at most one byte past the limit.
  std::string text(static_cast<size_t>(limits::kMaxSpecFileBytes) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<int64_t>(text.size()) > limits::kMaxSpecFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": more than the limit of ",
                                                   limits::FormatCount(limits::kMaxSpecFileBytes),
                                                   " bytes for a spec file"));
  }
  return text;
}

}  // namespace nmsparse
