// Where the coordinator is: its default port and address (what nmserver listens on by default, and where
// nmworker and nmctl look for it), and addresses completed with that port. Without a port gRPC would try 443.
#ifndef NMSPARSE_COMMON_COORDINATOR_ADDRESS_H_
#define NMSPARSE_COMMON_COORDINATOR_ADDRESS_H_

#include <string>

namespace nmsparse {

constexpr int kDefaultCoordinatorPort = 50151;

// "127.0.0.1:50151".
std::string DefaultCoordinatorAddress();

// `address` with ":50151" appended when it names no port ("localhost", "10.0.0.5", "[::1]", "gpu-01"); an
// address with a port, or with a gRPC scheme ("unix:/run/nm.sock", "dns:///host:1"), is returned unchanged.
std::string WithDefaultPort(const std::string& address);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_COORDINATOR_ADDRESS_H_
