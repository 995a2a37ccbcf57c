// The two ends of `nmctl export-model` in the coordinator (docs/interop.md): the caller's ExportModel, which
// orders the export from the worker holding the run's directory and relays what it uploads, and the
// worker's UploadModelExport. No model byte is stored: chunks pass through a ModelExportRelay.
#ifndef NMSPARSE_SERVER_API_MODEL_EXPORT_CALL_H_
#define NMSPARSE_SERVER_API_MODEL_EXPORT_CALL_H_

#include "nmsparse/v1/coordinator.grpc.pb.h"
#include "nmsparse/v1/worker_gateway.grpc.pb.h"
#include "server/api/model_export_relay.h"
#include "server/scheduling/assignment_hub.h"
#include "server/store/store.h"

namespace nmsparse::server {

// Refuses (naming the run) an unknown run, one still queued or training, one that never ran on a worker, and
// a worker that is not connected; else streams the files as the worker sends them. A run that reused another
// run's results is exported from that run.
grpc::Status RelayModelExport(Store* store, AssignmentHub* hub, ModelExportRelay* relay,
                              grpc::ServerContext* ctx, const v1::ExportModelRequest& request,
                              grpc::ServerWriter<v1::ModelFileChunk>* writer);

// Takes a worker's upload: the first message names the worker (its session is checked) and the export;
// every file name must be one of the export's (contract/model_export_files.h), the total stays within
// limits::kMaxModelExportBytes, and the upload must end with every file's last chunk.
grpc::Status TakeModelExportUpload(Store* store, ModelExportRelay* relay, grpc::ServerContext* ctx,
                                   grpc::ServerReader<v1::ModelExportUpload>* reader);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_API_MODEL_EXPORT_CALL_H_
