// The address a worker advertises at registration (nmworker --advertise_addr): node 0's becomes every rank's
// MASTER_ADDR in a multi-node run, so it must name one host other nodes can reach. Checked where it enters
// the coordinator: an IPv4 or IPv6 literal or a DNS host name, never a wildcard (0.0.0.0, ::), a multicast or
// broadcast address, or "localhost". Loopback literals are accepted (test nodes on one machine); the gang
// placement forms gangs of loopback nodes only with each other.
#ifndef NMSPARSE_SERVER_API_ADVERTISE_ADDRESS_H_
#define NMSPARSE_SERVER_API_ADVERTISE_ADDRESS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nmsparse {

// The address in one canonical form (IPv6 as inet_ntop writes it, an IPv4-mapped IPv6 address as its IPv4
// form, a host name in lower case), or InvalidArgument naming advertise_addr and the value.
absl::StatusOr<std::string> CanonicalAdvertiseAddress(absl::string_view addr);

}  // namespace nmsparse

#endif  // NMSPARSE_SERVER_API_ADVERTISE_ADDRESS_H_
