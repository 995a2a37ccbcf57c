#include "server/auth/transport_security.h"

#include <arpa/inet.h>
#include <grpcpp/security/server_credentials.h>
#include <netinet/in.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/pem_file.h"
#include "common/status_macros.h"

namespace nmsparse::server {
namespace {

absl::string_view HostOf(absl::string_view listen) {
  const size_t colon = listen.rfind(':');
  absl::string_view host = colon == absl::string_view::npos ? listen : listen.substr(0, colon);
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) host = host.substr(1, host.size() - 2);
  return host;
}

std::string NoAuthWarning(const std::string& listen) {
  return absl::StrCat(
      "WARNING: --insecure: serving ", listen,
      " WITHOUT AUTHENTICATION. Anyone who can reach this port can submit and cancel sweeps, read every spec "
      "and log, and register as a worker. Use only on a trusted network; see docs/security.md.");
}

}  // namespace

bool IsLoopbackListen(absl::string_view listen) {
  const std::string host(HostOf(listen));
  if (host == "localhost") return true;
  // Address literals only, parsed whole: "127.0.0.1.example.invalid" is a name that any DNS may resolve.
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

absl::StatusOr<TransportPlan> PlanTransport(const TransportSecurityOptions& options, bool has_tokens) {
  const bool tls = !options.tls_cert_file.empty();
  if (tls != !options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key: give both or neither");
  }
  if (!tls && !options.tls_client_ca_file.empty()) {
    return absl::InvalidArgumentError("--tls_client_ca needs --tls_cert and --tls_key");
  }
  const bool loopback = IsLoopbackListen(options.listen);
  TransportPlan plan;
  plan.kind = tls ? TransportPlan::Kind::kTls : TransportPlan::Kind::kInsecure;
  if (has_tokens) {
    if (tls) {
      plan.authenticate = true;
    } else if (loopback) {
      plan.kind = TransportPlan::Kind::kLocal;
      plan.authenticate = true;
    } else if (options.insecure) {
      plan.warning = absl::StrCat(NoAuthWarning(options.listen),
                                  " The database holds tokens, but without TLS they are NOT checked.");
    } else {
      return absl::FailedPreconditionError(absl::StrCat(
          "refusing to serve ", options.listen,
          " with tokens but without TLS: they would cross the network in clear text. Give --tls_cert and "
          "--tls_key (docs/security.md), listen on loopback, or pass --insecure to serve without "
          "authentication"));
    }
    return plan;
  }
  if (loopback) return plan;
  if (!options.insecure) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to serve ", options.listen,
        " without authentication: anyone who can reach it could submit, cancel, read every spec and log, and "
        "register as a worker. Create tokens with `nmserver init --db DB` and give --tls_cert and --tls_key "
        "(docs/security.md), or pass --insecure on a trusted network"));
  }
  plan.warning = NoAuthWarning(options.listen);
  return plan;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> BuildServerCredentials(
    const TransportPlan& plan, const TransportSecurityOptions& options,
    std::shared_ptr<grpc::AuthMetadataProcessor> authenticator) {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  switch (plan.kind) {
    case TransportPlan::Kind::kInsecure:
      return grpc::InsecureServerCredentials();  // Never with an authenticator (PlanTransport).
    case TransportPlan::Kind::kLocal:
      credentials = grpc::experimental::LocalServerCredentials(LOCAL_TCP);
      break;
    case TransportPlan::Kind::kTls: {
      NM_ASSIGN_OR_RETURN(std::string cert, ReadPemFile(options.tls_cert_file, "--tls_cert"));
      NM_ASSIGN_OR_RETURN(std::string key, ReadPemFile(options.tls_key_file, "--tls_key"));
      grpc::SslServerCredentialsOptions ssl;
      ssl.pem_key_cert_pairs.push_back({key, cert});
      if (!options.tls_client_ca_file.empty()) {
        NM_ASSIGN_OR_RETURN(std::string ca, ReadPemFile(options.tls_client_ca_file, "--tls_client_ca"));
        ssl.pem_root_certs = ca;
        // A certificate is verified when presented; WorkerGateway calls must present one (the authenticator).
        ssl.client_certificate_request = GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
      }
      credentials = grpc::SslServerCredentials(ssl);
      break;
    }
  }
  if (plan.authenticate) credentials->SetAuthMetadataProcessor(std::move(authenticator));
  return credentials;
}

}  // namespace nmsparse::server
