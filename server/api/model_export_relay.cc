#include "server/api/model_export_relay.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace nmsparse::server {

uint64_t ModelExportRelay::Open(int64_t worker_id, int64_t run_id) {
  absl::MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  Export& e = exports_[id];
  e.worker_id = worker_id;
  e.run_id = run_id;
  return id;
}

absl::StatusOr<std::optional<v1::ModelFileChunk>> ModelExportRelay::Next(uint64_t id,
                                                                         absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    auto it = exports_.find(id);
    return it == exports_.end() || !it->second.chunks.empty() || it->second.outcome.has_value();
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  auto it = exports_.find(id);
  if (it == exports_.end()) return absl::NotFoundError(absl::StrCat("model export ", id, " is not open"));
  Export& e = it->second;
  if (!e.chunks.empty()) {
    v1::ModelFileChunk chunk = std::move(e.chunks.front());
    e.chunks.pop_front();
    return std::optional<v1::ModelFileChunk>(std::move(chunk));
  }
  if (!e.outcome.has_value()) return std::optional<v1::ModelFileChunk>();
  if (!e.outcome->ok()) return *e.outcome;
  return absl::OutOfRangeError("every file was read");
}

void ModelExportRelay::Close(uint64_t id) {
  absl::MutexLock lock(&mu_);
  exports_.erase(id);
}

absl::Status ModelExportRelay::Attach(uint64_t id, int64_t worker_id) {
  absl::MutexLock lock(&mu_);
  auto it = exports_.find(id);
  if (it == exports_.end()) {
    return absl::NotFoundError(absl::StrCat("model export ", id,
                                            " is not open (its caller left, or the "
                                            "coordinator restarted)"));
  }
  if (it->second.worker_id != worker_id || it->second.attached) {
    return absl::PermissionDeniedError(absl::StrCat("model export ", id, " of run ", it->second.run_id,
                                                    " was not ordered from worker ", worker_id,
                                                    it->second.attached ? " or has its upload already" : ""));
  }
  it->second.attached = true;
  return absl::OkStatus();
}

absl::Status ModelExportRelay::Push(uint64_t id, v1::ModelFileChunk chunk) {
  absl::MutexLock lock(&mu_);
  auto room = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    auto it = exports_.find(id);
    return it == exports_.end() || it->second.chunks.size() < kMaxQueuedChunks;
  };
  mu_.Await(absl::Condition(&room));
  auto it = exports_.find(id);
  if (it == exports_.end())
    return absl::CancelledError(absl::StrCat("model export ", id, ": the caller left"));
  it->second.chunks.push_back(std::move(chunk));
  return absl::OkStatus();
}

void ModelExportRelay::Finish(uint64_t id, absl::Status outcome) {
  absl::MutexLock lock(&mu_);
  auto it = exports_.find(id);
  if (it != exports_.end() && !it->second.outcome.has_value()) it->second.outcome = std::move(outcome);
}

}  // namespace nmsparse::server
