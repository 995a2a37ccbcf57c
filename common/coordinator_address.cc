#include "common/coordinator_address.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace nmsparse {

std::string DefaultCoordinatorAddress() { return absl::StrCat("127.0.0.1:", kDefaultCoordinatorPort); }

std::string WithDefaultPort(const std::string& address) {
  if (address.empty() || absl::StrContains(address, "://") || absl::StartsWith(address, "unix:")) {
    return address;
  }
  // A bracketed IPv6 host has its port after the ']'; any other host has it after its only ':'.
  const size_t bracket = address.rfind(']');
  const bool has_port = absl::StartsWith(address, "[")
                            ? bracket != std::string::npos && address.find(':', bracket) != std::string::npos
                            : address.find(':') != std::string::npos;
  return has_port ? address : absl::StrCat(address, ":", kDefaultCoordinatorPort);
}

}  // namespace nmsparse
