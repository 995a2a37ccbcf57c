// The nmsparse release, declared once: nmserver, nmworker, nmtrain and nmctl print it for --version. Header
// only and dependency free, so the trainer (built with CMake on GPU nodes, no gRPC) includes it as it is.
// Bump it here when a release changes a program's behaviour or an inter-process contract.
#ifndef NMSPARSE_COMMON_VERSION_H_
#define NMSPARSE_COMMON_VERSION_H_

#include <string>

namespace nmsparse {

inline constexpr char kVersion[] = "0.1.0";

// "nmctl (nmsparse) 0.1.0\n": what `PROGRAM --version` prints on stdout (and exits 0).
inline std::string VersionText(const std::string& program) {
  return program + " (nmsparse) " + kVersion + "\n";
}

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_VERSION_H_
