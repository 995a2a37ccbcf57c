// The coordinator's side of `nmctl export-model`: it holds no model file, it passes chunks on. The caller's
// ExportModel call opens an export and reads from it; the worker that holds the run's directory, told through
// its assignment stream, attaches its UploadModelExport call and pushes the files' chunks. At most
// kMaxQueuedChunks wait between the two, so a slow reader holds the worker back instead of filling the
// coordinator's memory. Ephemeral: a restarted coordinator has no exports, and both ends get an error.
#ifndef NMSPARSE_SERVER_API_MODEL_EXPORT_RELAY_H_
#define NMSPARSE_SERVER_API_MODEL_EXPORT_RELAY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::server {

class ModelExportRelay {
 public:
  static constexpr size_t kMaxQueuedChunks = 8;

  // The caller's side. Opens the export of `run_id` that worker `worker_id` is to upload; returns its id.
  uint64_t Open(int64_t worker_id, int64_t run_id);
  // Waits up to `timeout` for the next chunk: a chunk, nullopt on timeout, OutOfRange once every chunk was
  // read and the upload ended well, or the upload's error.
  absl::StatusOr<std::optional<v1::ModelFileChunk>> Next(uint64_t id, absl::Duration timeout);
  // The caller is done (or gone): the export is forgotten, and the worker's next Push fails.
  void Close(uint64_t id);

  // The worker's side. OK when export `id` is open and was ordered from `worker_id`, and no upload is
  // attached yet; NotFound or PermissionDenied otherwise.
  absl::Status Attach(uint64_t id, int64_t worker_id);
  // Queues a chunk, waiting while kMaxQueuedChunks wait; Cancelled once the caller closed the export.
  absl::Status Push(uint64_t id, v1::ModelFileChunk chunk);
  // The upload ended: OK when every file was sent, else why not (the caller's error).
  void Finish(uint64_t id, absl::Status outcome);

 private:
  struct Export {
    int64_t worker_id = 0;
    int64_t run_id = 0;
    bool attached = false;
    std::deque<v1::ModelFileChunk> chunks;
    std::optional<absl::Status> outcome;  // Set by Finish.
  };
  absl::Mutex mu_;
  std::map<uint64_t, Export> exports_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_API_MODEL_EXPORT_RELAY_H_
