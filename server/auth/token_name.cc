#include "server/auth/token_name.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/visible_text.h"

namespace nmsparse::server {

absl::Status CheckTokenName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= kMaxTokenNameBytes && absl::ascii_isalnum(name[0]);
  for (char c : name) ok = ok && (absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-');
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("token name '", VisibleText(name, 80), "': use 1 to ",
                                                 kMaxTokenNameBytes,
                                                 " letters, digits, '.', '_' or '-', beginning with a letter "
                                                 "or a digit"));
}

}  // namespace nmsparse::server
