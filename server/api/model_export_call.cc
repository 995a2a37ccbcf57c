#include "server/api/model_export_call.h"

#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "contract/model_export_files.h"
#include "schemas/limits.h"
#include "schemas/request_bounds.h"
#include "server/api/grpc_status.h"
#include "server/auth/worker_session.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/worker_table.h"

namespace nmsparse::server {
namespace {

constexpr absl::Duration kPoll = absl::Milliseconds(200);
// How long the caller waits for the worker's next chunk: `nmtrain --export` of a large model reads its
// checkpoint and writes the files before the first chunk leaves.
constexpr absl::Duration kIdleLimit = absl::Minutes(10);

// Where run `run_id`'s checkpoint is: the run (or the run whose results it reused) and its worker.
struct ExportSource {
  int64_t run_id = 0;
  int64_t worker_id = 0;
  std::string host;
};

absl::StatusOr<ExportSource> FindSource(Database* db, int64_t run_id) {
  NM_ASSIGN_OR_RETURN(RunRecord r, LoadRun(db, run_id, RunDetail::kSummary));
  if (r.run.reused_from() != 0) {
    NM_ASSIGN_OR_RETURN(r, LoadRun(db, r.run.reused_from(), RunDetail::kSummary));
  }
  const std::string name = r.run.id() == run_id
                               ? absl::StrCat("run ", run_id)
                               : absl::StrCat("run ", run_id, " (reusing run ", r.run.id(), ")");
  if (!IsFinal(r.run.state())) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " is ", v1::RunState_Name(r.run.state()), ": export its model once it has ended"));
  }
  if (r.run.worker_id() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " never ran on a worker: it has no checkpoint to export"));
  }
  NM_ASSIGN_OR_RETURN(WorkerRecord w, LoadWorker(db, r.run.worker_id()));
  return ExportSource{r.run.id(), r.run.worker_id(), w.worker.host()};
}

absl::Status CheckChoices(const v1::ExportModelRequest& request) {
  if (!v1::ModelWeights_IsValid(request.weights())) {
    return absl::InvalidArgumentError(absl::StrCat("weights: unknown value ", request.weights()));
  }
  if (!v1::ModelDtype_IsValid(request.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat("dtype: unknown value ", request.dtype()));
  }
  return absl::OkStatus();
}

// Sends what the worker uploads until the upload ends, the caller leaves, or the worker goes quiet.
absl::Status Relay(AssignmentHub* hub, ModelExportRelay* relay, uint64_t id, const ExportSource& source,
                   grpc::ServerContext* ctx, grpc::ServerWriter<v1::ModelFileChunk>* writer) {
  absl::Time last = absl::Now();
  while (!ctx->IsCancelled()) {
    absl::StatusOr<std::optional<v1::ModelFileChunk>> next = relay->Next(id, kPoll);
    if (absl::IsOutOfRange(next.status())) return absl::OkStatus();
    if (!next.ok()) return next.status();
    if (next->has_value()) {
      if (!writer->Write(**next)) return absl::CancelledError("the caller left");
      last = absl::Now();
      continue;
    }
    const std::string worker = absl::StrCat("worker ", source.worker_id, " (", source.host, ")");
    if (!hub->IsConnected(source.worker_id)) {
      return absl::UnavailableError(absl::StrCat(worker, ", which holds run ", source.run_id,
                                                 "'s directory, disconnected during the export"));
    }
    if (absl::Now() - last > kIdleLimit) {
      return absl::DeadlineExceededError(absl::StrCat(worker, " sent nothing of run ", source.run_id,
                                                      "'s export for ", absl::FormatDuration(kIdleLimit)));
    }
  }
  return absl::CancelledError("the caller left");
}

}  // namespace

grpc::Status RelayModelExport(Store* store, AssignmentHub* hub, ModelExportRelay* relay,
                              grpc::ServerContext* ctx, const v1::ExportModelRequest& request,
                              grpc::ServerWriter<v1::ModelFileChunk>* writer) {
  if (absl::Status s = CheckRequestBounds(request); !s.ok()) return ToGrpc(s);
  if (absl::Status s = CheckChoices(request); !s.ok()) return ToGrpc(s);
  ExportSource source;
  absl::Status found = store->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(source, FindSource(db, request.run_id()));
    return absl::OkStatus();
  });
  if (!found.ok()) return ToGrpc(found);
  const uint64_t id = relay->Open(source.worker_id, source.run_id);
  v1::Assignment order;
  v1::ModelExportOrder* o = order.mutable_export_model();
  o->set_export_id(id);
  o->set_run_id(source.run_id);
  o->set_weights(request.weights());
  o->set_dtype(request.dtype());
  absl::Status s =
      hub->Push(source.worker_id, order)
          ? Relay(hub, relay, id, source, ctx, writer)
          : absl::UnavailableError(absl::StrCat(
                "worker ", source.worker_id, " (", source.host, "), which holds run ", source.run_id,
                "'s directory and checkpoint, is not connected: start it again "
                "(same --work_dir) to export this run"));
  relay->Close(id);
  return ToGrpc(s);
}

grpc::Status TakeModelExportUpload(Store* store, ModelExportRelay* relay, grpc::ServerContext* ctx,
                                   grpc::ServerReader<v1::ModelExportUpload>* reader) {
  v1::ModelExportUpload msg;
  if (!reader->Read(&msg)) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "empty upload");
  // Bounds first, as every call checks its request before anything else (request_bounds.h).
  if (absl::Status s = CutAndCheckReportBounds(&msg); !s.ok()) return ToGrpc(s);
  const uint64_t id = msg.export_id();
  absl::Status attached = store->Read([&](Database* db) -> absl::Status {
    return CheckWorkerSession(db, ctx, msg.worker_id(), absl::StrCat("worker ", msg.worker_id()));
  });
  if (attached.ok()) attached = relay->Attach(id, msg.worker_id());
  if (!attached.ok()) return ToGrpc(attached);

  std::set<std::string> done;
  int64_t total = 0;
  absl::Status outcome;
  do {
    if (absl::Status s = CutAndCheckReportBounds(&msg); !s.ok()) {
      outcome = s;
      break;
    }
    if (!msg.error().empty()) {
      outcome = absl::FailedPreconditionError(msg.error());
      break;
    }
    const v1::ModelFileChunk& chunk = msg.chunk();
    // A name from another process, checked against the fixed list and shown escaped (it reaches terminals).
    if (!contract::IsExportFile(chunk.file()) || done.count(chunk.file())) {
      outcome = absl::InvalidArgumentError(absl::StrCat("chunk.file: '", absl::CHexEscape(chunk.file()),
                                                        "' is not an export file still to send"));
      break;
    }
    total += static_cast<int64_t>(chunk.data().size());
    if (total > limits::kMaxModelExportBytes) {
      outcome = absl::ResourceExhaustedError(absl::StrCat("the exported model passes the limit of ",
                                                          limits::FormatCount(limits::kMaxModelExportBytes),
                                                          " bytes"));
      break;
    }
    if (chunk.last()) done.insert(chunk.file());
    if (absl::Status s = relay->Push(id, chunk); !s.ok()) return ToGrpc(s);
  } while (reader->Read(&msg));
  if (outcome.ok() && done.size() != std::size(contract::kExportFiles)) {
    outcome = absl::UnavailableError(absl::StrCat(
        "the worker's upload ended after ", done.size(), " of ", std::size(contract::kExportFiles),
        " files (", absl::StrJoin(done, ", "), ")", ctx->IsCancelled() ? ": it was cut off" : ""));
  }
  relay->Finish(id, outcome);
  return ToGrpc(outcome);
}

}  // namespace nmsparse::server
