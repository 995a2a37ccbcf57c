#include "report/file_name_part.h"

#include "absl/strings/ascii.h"

namespace nmsparse::report {

std::string FileNamePart(const std::string& text, size_t max_bytes) {
  std::string out = text.substr(0, max_bytes);
  for (char& c : out) {
    const bool keep =
        absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '=' || c == '-';
    if (!keep) c = '_';
  }
  if (!out.empty() && out[0] == '.') out[0] = '_';
  return out;
}

}  // namespace nmsparse::report
