#include "common/client_security.h"

#include <grpcpp/client_context.h>
#include <grpcpp/security/credentials.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/pem_file.h"
#include "common/status_macros.h"

namespace nmsparse {
namespace {

constexpr off_t kMaxTokenFileBytes = 4096;

// A flag's value, else its variable's; `source` says which, for error messages.
std::string FlagOrEnv(const std::string& flag_value, const char* flag, const char* variable,
                      std::string* source) {
  if (!flag_value.empty()) {
    *source = flag;
    return flag_value;
  }
  const char* env = std::getenv(variable);
  *source = absl::StrCat("$", variable);
  return env != nullptr ? env : "";
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(
    const ClientSecurityFlags& flags) {
  std::string ca_source, cert_source, key_source;
  const std::string ca = FlagOrEnv(flags.tls_ca, "--tls-ca", kTlsCaVariable, &ca_source);
  const std::string cert = FlagOrEnv(flags.tls_cert, "--tls-cert", kTlsCertVariable, &cert_source);
  const std::string key = FlagOrEnv(flags.tls_key, "--tls-key", kTlsKeyVariable, &key_source);
  if (cert.empty() != key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key: give both or neither");
  }
  if (ca.empty()) {
    if (!cert.empty())
      return absl::InvalidArgumentError("--tls-cert needs --tls-ca (TLS to the coordinator)");
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  NM_ASSIGN_OR_RETURN(std::string root, ReadPemFile(ca, ca_source));
  ssl.pem_root_certs = root;
  if (!cert.empty()) {
    NM_ASSIGN_OR_RETURN(std::string chain, ReadPemFile(cert, cert_source));
    NM_ASSIGN_OR_RETURN(std::string private_key, ReadPemFile(key, key_source));
    ssl.pem_cert_chain = chain;
    ssl.pem_private_key = private_key;
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return absl::NotFoundError(absl::StrCat(path, ": no such token file"));
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  if ((st.st_mode & 077) != 0) {
    return absl::PermissionDeniedError(
        absl::StrFormat("%s: mode %04o lets other users read or change this token; run chmod 600 %s", path,
                        st.st_mode & 07777, path));
  }
  if (st.st_size > kMaxTokenFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", st.st_size, " bytes, too large for a token file"));
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(text.str()));
  if (!in || token.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": empty token file"));
  return token;
}

absl::StatusOr<ClientSecurity> ResolveClientSecurity(const ClientSecurityFlags& flags) {
  ClientSecurity out;
  std::string source;
  const std::string file = FlagOrEnv(flags.token_file, "--token-file", kTokenFileVariable, &source);
  if (!file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(file);
    if (!token.ok())
      return absl::Status(token.status().code(), absl::StrCat(source, ": ", token.status().message()));
    out.token = *token;
  } else if (const char* env = std::getenv(kTokenVariable); env != nullptr) {
    out.token = std::string(absl::StripAsciiWhitespace(env));
  }
  NM_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials, ChannelCredentials(flags));
  out.credentials = credentials;
  std::string ca_source;
  out.tls = !FlagOrEnv(flags.tls_ca, "--tls-ca", kTlsCaVariable, &ca_source).empty();
  return out;
}

void AttachToken(const std::string& token, grpc::ClientContext* context) {
  if (!token.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
}

}  // namespace nmsparse
