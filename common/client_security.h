// How nmctl and nmworker talk to an authenticated coordinator: the bearer token (from a private file or the
// environment) sent as "authorization" metadata on every call, and TLS channel credentials when a CA is given
// (with a client certificate for mTLS). docs/security.md describes the model.
#ifndef NMSPARSE_COMMON_CLIENT_SECURITY_H_
#define NMSPARSE_COMMON_CLIENT_SECURITY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace grpc {
class ChannelCredentials;
class ClientContext;
}  // namespace grpc

namespace nmsparse {

// The environment variables a client's credentials come from. nmworker keeps them out of its trainers'
// environment: a trainer runs user-chosen specs and needs no access to the coordinator.
inline constexpr char kTokenVariable[] = "NMSPARSE_TOKEN";
inline constexpr char kTokenFileVariable[] = "NMSPARSE_TOKEN_FILE";
inline constexpr char kTlsCaVariable[] = "NMSPARSE_TLS_CA";
inline constexpr char kTlsCertVariable[] = "NMSPARSE_TLS_CERT";
inline constexpr char kTlsKeyVariable[] = "NMSPARSE_TLS_KEY";
inline constexpr const char* kCredentialVariables[] = {kTokenVariable, kTokenFileVariable, kTlsCaVariable,
                                                       kTlsCertVariable, kTlsKeyVariable};

// Flag values; an empty one falls back to its environment variable (the table in client_security.cc).
struct ClientSecurityFlags {
  std::string token_file;  // $NMSPARSE_TOKEN_FILE; else the token itself from $NMSPARSE_TOKEN.
  std::string tls_ca;    // $NMSPARSE_TLS_CA: PEM CA that signed the coordinator's certificate; turns TLS on.
  std::string tls_cert;  // $NMSPARSE_TLS_CERT: PEM client certificate (mTLS), with tls_key.
  std::string tls_key;   // $NMSPARSE_TLS_KEY
};

struct ClientSecurity {
  std::string token;  // Empty: no token is sent.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  bool tls = false;  // A CA was given: the channel is TLS.
};

// The token in `path`, surrounding whitespace removed. Refused, like ssh refuses a private key, when the file
// is readable or writable by group or others (naming the mode and `chmod 600 FILE`), empty, or not a file.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Flags, then the environment. Errors name the file and the flag or variable it came from.
absl::StatusOr<ClientSecurity> ResolveClientSecurity(const ClientSecurityFlags& flags);

// Adds "authorization: Bearer TOKEN" to a call (nothing for an empty token).
void AttachToken(const std::string& token, grpc::ClientContext* context);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_CLIENT_SECURITY_H_
