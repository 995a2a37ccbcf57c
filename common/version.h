// The nmsparse release, declared once: nmserver, nmworker, nmtrain and nmctl print it for --version. Header
// only and dependency free, so the trainer (built with CMake on GPU nodes, no gRPC) includes it as it is.
// Bump it here when a release changes a program's behaviour or an inter-process contract.
#ifndef NMSPARSE_COMMON_VERSION_H_
#define NMSPARSE_COMMON_VERSION_H_

#include <string>

namespace nmsparse {

inline constexpr char kVersion[] = "0.2.0";

// The wire version nmctl and nmserver speak: what their messages mean. 1 (nmsparse 0.1.0): a spec travelled
// as v1.ExperimentSpec messages; 2 (0.2.0): as YAML text (v1.SweepSpec.base, v1.Run.resolved_spec). nmctl
// sends its version with every call, nmserver answers with its own, and each refuses the other's other
// version.
inline constexpr int kWireVersion = 2;
inline constexpr char kWireVersionMetadata[] = "nmsparse-wire-version";

// The refusal either side gives: "nmctl speaks wire version 1 and nmserver speaks wire version 2: use nmctl
// and nmserver of one nmsparse release (this one is 0.2.0)".
inline std::string WireVersionMismatch(int nmctl_version, int nmserver_version) {
  return "nmctl speaks wire version " + std::to_string(nmctl_version) + " and nmserver speaks wire version " +
         std::to_string(nmserver_version) + ": use nmctl and nmserver of one nmsparse release (this one is " +
         kVersion + ")";
}

// "nmctl (nmsparse) 0.1.0\n": what `PROGRAM --version` prints on stdout (and exits 0).
inline std::string VersionText(const std::string& program) {
  return program + " (nmsparse) " + kVersion + "\n";
}

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_VERSION_H_
