#include "server/auth/worker_session.h"

#include <grpcpp/server_context.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "contract/worker_session.h"
#include "schemas/content_hash.h"
#include "server/auth/token.h"
#include "server/store/worker_table.h"

namespace nmsparse::server {
namespace {

std::string DigestOf(const std::string& session) { return session.empty() ? "" : Sha256Hex(session); }

}  // namespace

absl::StatusOr<std::string> NewWorkerSession() { return NewSecret("nms_"); }

std::string PresentedWorkerSession(const grpc::ServerContext* ctx) {
  const auto& metadata = ctx->client_metadata();
  auto it = metadata.find(contract::kWorkerSessionMetadata);
  return it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
}

absl::Status CheckWorkerSession(Database* db, const grpc::ServerContext* ctx, int64_t worker_id,
                                absl::string_view what) {
  const std::string session = PresentedWorkerSession(ctx);
  if (session.empty()) {
    return absl::UnauthenticatedError(absl::StrCat(what, ": the call carries no worker session (metadata ",
                                                   contract::kWorkerSessionMetadata,
                                                   "); a worker sends the one its Register returned"));
  }
  NM_ASSIGN_OR_RETURN(int64_t holder, WorkerBySession(db, DigestOf(session)));
  if (holder != 0 && holder == worker_id) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat(what, " belongs to worker ", worker_id, "; this call's session ",
                   holder == 0 ? "is not any registered worker's" : absl::StrCat("is worker ", holder, "'s"),
                   ": a worker acts only for the attempts its own registration holds"));
}

absl::StatusOr<RegistrationBinding> BindRegistration(Database* db, int64_t requested_id,
                                                     const std::string& presented_session) {
  RegistrationBinding binding;
  if (requested_id != 0) {
    absl::StatusOr<WorkerRecord> worker = LoadWorker(db, requested_id);
    if (!worker.ok() && !absl::IsNotFound(worker.status())) return worker.status();
    if (worker.ok()) {
      NM_ASSIGN_OR_RETURN(std::string stored, WorkerSessionSha256(db, requested_id));
      binding.worker_id = requested_id;
      if (!stored.empty() && stored == DigestOf(presented_session)) return binding;  // Its own: kept.
      if (!stored.empty() && worker->worker.alive()) {
        return absl::PermissionDeniedError(absl::StrCat(
            "worker ", requested_id, " is registered by another nmworker process (", worker->worker.host(),
            ") whose lease holds; a worker id is taken over only with its session or after its lease "
            "expires: "
            "register as a new worker (worker_id 0)"));
      }
    }
  }
  NM_ASSIGN_OR_RETURN(binding.new_session, NewWorkerSession());
  return binding;
}

}  // namespace nmsparse::server
