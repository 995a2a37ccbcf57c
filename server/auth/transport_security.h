// How nmserver serves its port: which gRPC server credentials, and whether every call must carry a token.
// The decision (PlanTransport) is a pure function of the flags and of whether the database holds tokens, so
// the safe defaults are tested without sockets:
//
//   listen      tokens  TLS   served as
//   loopback    no      any   as before authentication existed: anyone on this host (TLS if given)
//   loopback    yes     no    gRPC local credentials (loopback peers only) + tokens
//   any         yes     yes   TLS + tokens (+ client certificates for workers with --tls_client_ca)
//   other       yes     no    refused: tokens would cross the network in clear text; --insecure serves
//                             plaintext without checking them, with a warning
//   other       no      any   refused: no authentication; --insecure serves anyway, with a warning
#ifndef NMSPARSE_SERVER_AUTH_TRANSPORT_SECURITY_H_
#define NMSPARSE_SERVER_AUTH_TRANSPORT_SECURITY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace grpc {
class AuthMetadataProcessor;
class ServerCredentials;
}  // namespace grpc

namespace nmsparse::server {

struct TransportSecurityOptions {
  std::string listen;              // host:port
  std::string tls_cert_file;       // PEM server certificate (chain); with tls_key_file.
  std::string tls_key_file;        // PEM private key.
  std::string tls_client_ca_file;  // PEM CA for client certificates: workers must present one it signed.
  bool insecure = false;           // Serve a non-loopback address without authentication.
};

struct TransportPlan {
  enum class Kind { kInsecure, kLocal, kTls };
  Kind kind = Kind::kInsecure;
  bool authenticate = false;  // Every call needs a token (TokenAuthenticator).
  std::string warning;        // Non-empty: print it loudly at start.
};

// The host of `listen` (HOST:PORT, [IPV6]:PORT) is an IPv4 literal in 127.0.0.0/8, the IPv6 literal ::1, or
// exactly "localhost". Any other name is not, whatever it starts with.
bool IsLoopbackListen(absl::string_view listen);

// InvalidArgument for inconsistent TLS flags; FailedPrecondition, naming the address and what to do, for a
// refused combination (table above).
absl::StatusOr<TransportPlan> PlanTransport(const TransportSecurityOptions& options, bool has_tokens);

// The credentials for `plan`, with `authenticator` installed when plan.authenticate. Errors name the file and
// its flag when a PEM file cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> BuildServerCredentials(
    const TransportPlan& plan, const TransportSecurityOptions& options,
    std::shared_ptr<grpc::AuthMetadataProcessor> authenticator);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_TRANSPORT_SECURITY_H_
