#include "server/auth/token_authenticator.h"

#include <grpc/grpc_security_constants.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "schemas/content_hash.h"
#include "server/auth/bearer_token.h"
#include "server/auth/caller.h"
#include "server/auth/role.h"
#include "server/store/token_table.h"

namespace nmsparse::server {
namespace {

constexpr char kAuthorization[] = "authorization";
constexpr char kWorkerGateway[] = "/nmsparse.v1.WorkerGateway/";

std::string Value(const grpc::AuthMetadataProcessor::InputMetadata& metadata, const char* key) {
  auto it = metadata.find(key);
  return it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
}

grpc::Status Unauthenticated(const std::string& message) {
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, message);
}

}  // namespace

TokenAuthenticator::TokenAuthenticator(Store* store, bool require_worker_certificate,
                                       std::function<int64_t()> now_ms)
    : store_(store), require_worker_certificate_(require_worker_certificate), now_ms_(std::move(now_ms)) {}

absl::StatusOr<Caller> TokenAuthenticator::Authenticate(absl::string_view authorization,
                                                        absl::string_view path) const {
  const std::optional<absl::string_view> bearer = BearerToken(authorization);
  if (!bearer) {
    return absl::UnauthenticatedError(
        "this coordinator requires a token: nmctl --token-file FILE (or $NMSPARSE_TOKEN_FILE, "
        "$NMSPARSE_TOKEN), "
        "nmworker --token-file FILE; an admin makes one with `nmserver token add`");
  }
  std::optional<TokenRecord> record;
  const std::string token_sha256 = Sha256Hex(std::string(*bearer));
  absl::Status s = store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(std::optional<TokenRecord> found, FindTokenByHash(db, token_sha256));
    record = std::move(found);
    return absl::OkStatus();
  });
  if (!s.ok()) return absl::UnavailableError(s.message());
  if (!record)
    return absl::UnauthenticatedError(
        "unknown or revoked token: ask an admin for a new one (nmserver token add)");
  if (record->expires_at_ms != 0 && now_ms_() >= record->expires_at_ms) {
    return absl::UnauthenticatedError(
        absl::StrCat("token '", record->name, "' expired at ",
                     absl::FormatTime(absl::FromUnixMillis(record->expires_at_ms)),
                     ": ask an admin for a new one (nmserver token add)"));
  }
  absl::StatusOr<Role> role = ParseRole(record->role);
  if (!role.ok()) return absl::InternalError(role.status().message());
  if (absl::Status may = CheckMayCall(*role, path, record->name); !may.ok()) {
    return absl::PermissionDeniedError(may.message());
  }
  return Caller{record->name, *role, token_sha256};
}

grpc::Status TokenAuthenticator::Process(const InputMetadata& metadata, grpc::AuthContext* context,
                                         OutputMetadata* consumed, OutputMetadata*) {
  const std::string path = Value(metadata, ":path");
  const std::string header = Value(metadata, kAuthorization);
  absl::StatusOr<Caller> caller = Authenticate(header, path);
  if (!caller.ok()) {
    return grpc::Status(static_cast<grpc::StatusCode>(caller.status().code()),
                        std::string(caller.status().message()));
  }
  if (require_worker_certificate_ && absl::StartsWith(path, kWorkerGateway) &&
      context->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME).empty()) {
    return Unauthenticated(absl::StrCat(
        path,
        " needs a client certificate signed by nmserver --tls_client_ca (nmworker --tls_cert/--tls_key)"));
  }
  context->AddProperty(kCallerNameProperty, caller->name);
  context->AddProperty(kCallerRoleProperty, RoleName(caller->role));
  context->AddProperty(kCallerTokenProperty, caller->token_sha256);
  // Consumed: the token is not handed on to the services' metadata.
  consumed->insert({kAuthorization, header});
  return grpc::Status::OK;
}

}  // namespace nmsparse::server
