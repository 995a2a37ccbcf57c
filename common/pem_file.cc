#include "common/pem_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace nmsparse {

absl::StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& source) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty())
    return absl::InvalidArgumentError(absl::StrCat(source, ": cannot read ", path));
  return text.str();
}

}  // namespace nmsparse
