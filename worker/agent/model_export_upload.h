// The worker's side of `nmctl export-model` (docs/interop.md): for an export the coordinator ordered on the
// assignment stream, run `nmtrain --export` on the run's checkpoint into a scratch directory of the work
// dir, send the files on UploadModelExport in bounded chunks with each file's SHA-256, and remove them.
// When the run has no checkpoint here, or nmtrain refuses, the upload carries the reason instead, naming
// the run and the file.
#ifndef NMSPARSE_WORKER_AGENT_MODEL_EXPORT_UPLOAD_H_
#define NMSPARSE_WORKER_AGENT_MODEL_EXPORT_UPLOAD_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "nmsparse/v1/worker_gateway.pb.h"
#include "worker/agent/coordinator_client.h"

namespace nmsparse::agent {

struct ModelExportJob {
  std::string trainer;   // The nmtrain binary.
  std::string work_dir;  // Runs live in <work_dir>/runs/<run_id>/; scratch in <work_dir>/exports/<id>/.
  std::string host;      // Named in errors.
  int64_t worker_id = 0;
  v1::ModelExportOrder order;
};

// Exports and uploads; the status is the upload's (what the coordinator answered).
absl::Status ExportAndUpload(const ModelExportJob& job, CoordinatorClient* client);

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_MODEL_EXPORT_UPLOAD_H_
