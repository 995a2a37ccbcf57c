#include "server/api/advertise_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/visible_text.h"

namespace nmsparse {
namespace {

absl::Status Refused(absl::string_view addr, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("advertise_addr: '", VisibleText(std::string(addr)), "' ",
                                                 why, "; give the address other nodes reach this worker at"));
}

absl::StatusOr<std::string> CanonicalIpv4(absl::string_view addr, in_addr a) {
  const uint32_t host = ntohl(a.s_addr);
  if (host == 0) return Refused(addr, "is the wildcard address");
  if ((host >> 28) == 0xE) return Refused(addr, "is a multicast address");
  if (host == 0xFFFFFFFFu) return Refused(addr, "is the broadcast address");
  char text[INET_ADDRSTRLEN];
  return std::string(inet_ntop(AF_INET, &a, text, sizeof(text)));
}

// RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, 1-63 characters each.
bool IsHostName(absl::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> CanonicalAdvertiseAddress(absl::string_view addr) {
  const std::string text(addr);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return CanonicalIpv4(addr, v4);
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      std::memcpy(&v4.s_addr, &v6.s6_addr[12], 4);
      return CanonicalIpv4(addr, v4);
    }
    if (IN6_IS_ADDR_UNSPECIFIED(&v6)) return Refused(addr, "is the wildcard address");
    if (IN6_IS_ADDR_MULTICAST(&v6)) return Refused(addr, "is a multicast address");
    char out[INET6_ADDRSTRLEN];
    return std::string(inet_ntop(AF_INET6, &v6, out, sizeof(out)));
  }
  if (!IsHostName(text)) return Refused(addr, "is neither an IP address nor a host name");
  const std::string name = absl::AsciiStrToLower(text);
  if (name == "localhost" || absl::EndsWith(name, ".localhost")) {
    return Refused(addr, "names this machine only (test nodes on one machine use a 127.x.y.z address)");
  }
  return name;
}

}  // namespace nmsparse
