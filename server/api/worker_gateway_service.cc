#include "server/api/worker_gateway_service.h"

#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "contract/nmtrain_exit_codes.h"
#include "contract/rendezvous_hand_back.h"
#include "schemas/content_hash.h"
#include "schemas/request_bounds.h"
#include "server/api/advertise_address.h"
#include "server/api/grpc_status.h"
#include "server/api/metric_intake.h"
#include "server/api/model_export_call.h"
#include "server/auth/worker_session.h"
#include "server/store/clock.h"
#include "server/store/event_table.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/worker_table.h"

namespace nmsparse::server {
namespace {

constexpr absl::Duration kStreamPoll = absl::Milliseconds(200);

// A report's run, and which node of the attempt sent it (0 for a single-node run).
struct Reporter {
  RunRecord run;
  uint32_t node_rank = 0;
};

// CheckAttempt plus the session: only a worker holding (a node of) the attempt may report on it.
absl::StatusOr<Reporter> CheckReport(Database* db, const grpc::ServerContext* ctx, const v1::RunAttempt& ra) {
  NM_ASSIGN_OR_RETURN(RunRecord r, CheckAttempt(db, ra));
  const std::string what = absl::StrCat("run ", ra.run_id(), " attempt ", ra.attempt());
  for (const v1::GangMember& m : r.run.gang().members()) {
    if (m.node_rank() != 0 && CheckWorkerSession(db, ctx, m.worker_id(), what).ok())
      return Reporter{std::move(r), m.node_rank()};
  }
  NM_RETURN_IF_ERROR(CheckWorkerSession(db, ctx, r.run.worker_id(), what));
  return Reporter{std::move(r), 0};
}

// The worker's address as the coordinator sees the call: gRPC's peer "ipv4:10.0.0.5:41234" or
// "ipv6:[fd00::5]:41234" gives the host part; "" for any other transport.
std::string PeerAddress(const grpc::ServerContext* ctx) {
  const std::string peer = ctx->peer();
  std::string host;
  if (absl::StartsWith(peer, "ipv4:")) {
    host = peer.substr(5, peer.rfind(':') - 5);
  } else if (absl::StartsWith(peer, "ipv6:[")) {
    host = peer.substr(6, peer.find(']') - 6);
  }
  return host;
}

// A call for worker `worker_id` itself (heartbeat, leave, assignment stream): NotFound for an unknown id, so
// that the agent registers again; else the call must present that worker's session.
absl::Status KnownWorkerSession(Database* db, const grpc::ServerContext* ctx, int64_t worker_id) {
  NM_RETURN_IF_ERROR(WorkerSessionSha256(db, worker_id).status());
  return CheckWorkerSession(db, ctx, worker_id, absl::StrCat("worker ", worker_id));
}

// True when `ra` is an attempt the worker should keep running.
absl::StatusOr<bool> StillHeld(Database* db, int64_t worker_id, const v1::RunAttempt& ra) {
  absl::StatusOr<RunRecord> r = LoadRun(db, ra.run_id(), RunDetail::kSummary);
  if (absl::IsNotFound(r.status())) return false;
  if (!r.ok()) return r.status();
  return HoldsAttempt(r->run, worker_id) && r->run.attempt() == ra.attempt() && IsActive(r->run.state()) &&
         !r->cancel_requested;
}

// After a registration: attempts the agent runs that are not this worker's current ones go to `stop`; RUNNING
// runs the database gives this worker but the agent no longer runs are lost attempts.
absl::Status Reconcile(Database* db, int64_t worker_id, const v1::RegisterRequest& req,
                       v1::RegisterResponse* resp) {
  std::set<std::pair<int64_t, uint32_t>> kept;
  for (const v1::RunAttempt& ra : req.running()) {
    NM_ASSIGN_OR_RETURN(bool held, StillHeld(db, worker_id, ra));
    if (held) {
      kept.emplace(ra.run_id(), ra.attempt());
    } else {
      *resp->add_stop() = ra;
    }
  }
  NM_ASSIGN_OR_RETURN(std::vector<RunRecord> running,
                      ActiveRunsHeldBy(db, worker_id, v1::RUNNING, RunDetail::kSummary));
  for (const RunRecord& r : running) {
    if (kept.count({r.run.id(), r.run.attempt()})) continue;
    NM_RETURN_IF_ERROR(LoseAttempt(
        db, r, absl::StrCat("worker ", worker_id, " re-registered without attempt ", r.run.attempt()),
        NowMs()));
  }
  return absl::OkStatus();
}

// A leaving worker: marked gone so that it gets no more runs; the runs the coordinator gives it but the agent
// does not list (assignments still on their way) go back to the queue without costing a retry. Returns
// whether any did.
absl::StatusOr<bool> Leave(Database* db, int64_t worker_id,
                           const google::protobuf::RepeatedPtrField<v1::RunAttempt>& running) {
  const int64_t now = NowMs();
  NM_RETURN_IF_ERROR(MarkWorkerGone(db, worker_id, now));
  std::set<std::pair<int64_t, uint32_t>> listed;
  for (const v1::RunAttempt& ra : running) listed.emplace(ra.run_id(), ra.attempt());
  NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs,
                      ActiveRunsHeldBy(db, worker_id, v1::RUN_STATE_UNSPECIFIED, RunDetail::kSummary));
  bool any = false;
  for (const RunRecord& r : runs) {
    if (listed.count({r.run.id(), r.run.attempt()})) continue;
    NM_RETURN_IF_ERROR(HandBackAttempt(
        db, r, absl::StrCat("worker ", worker_id, " left before starting attempt ", r.run.attempt()), now));
    any = true;
  }
  return any;
}

// This worker's ASSIGNED runs, with the assignment to (re)send.
absl::StatusOr<std::vector<v1::Assignment>> PendingAssignments(Database* db, int64_t worker_id) {
  NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs,
                      ActiveRunsHeldBy(db, worker_id, v1::ASSIGNED, RunDetail::kFull));
  std::vector<v1::Assignment> out;
  for (const RunRecord& r : runs) out.push_back(AssignmentFor(r.run, worker_id));
  return out;
}

// Every handler starts with its request's bounds (schemas/request_bounds.h): past one it is refused before
// anything is read or stored.
grpc::Status CheckBounds(const google::protobuf::Message& request) {
  return ToGrpc(CheckRequestBounds(request));
}

// A report as the store takes it: `*report` stays when every field fits; else it points to `cut`, a copy
// whose long text (a log line, a run's end message) is cut as the worker contract says, or the answer is an
// error for any other field past its bound.
template <typename Report>
grpc::Status BoundReport(const Report** report, Report* cut) {
  if (CheckRequestBounds(**report).ok()) return grpc::Status::OK;
  *cut = **report;
  if (absl::Status s = CutAndCheckReportBounds(cut); !s.ok()) return ToGrpc(s);
  *report = cut;
  return grpc::Status::OK;
}

}  // namespace

grpc::Status WorkerGatewayService::Register(grpc::ServerContext* ctx, const v1::RegisterRequest* req,
                                            v1::RegisterResponse* resp) {
  if (grpc::Status s = CheckBounds(*req); !s.ok()) return s;
  if (req->slots().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "slots: empty; a worker must offer at least one slot");
  }
  const std::string presented = PresentedWorkerSession(ctx);
  std::string advertise_addr = PeerAddress(ctx);
  if (!req->advertise_addr().empty()) {
    absl::StatusOr<std::string> checked = CanonicalAdvertiseAddress(req->advertise_addr());
    if (!checked.ok()) return ToGrpc(checked.status());
    advertise_addr = *checked;
  }
  absl::Status s = store_->Write([&](Database* db) -> absl::Status {
    resp->Clear();
    NM_ASSIGN_OR_RETURN(RegistrationBinding binding, BindRegistration(db, req->worker_id(), presented));
    NM_ASSIGN_OR_RETURN(int64_t id, UpsertWorker(db, binding.worker_id, req->host(), req->slots(), req->job(),
                                                 NowMs(), advertise_addr, req->storage()));
    if (!binding.new_session.empty()) {
      NM_RETURN_IF_ERROR(SetWorkerSession(db, id, Sha256Hex(binding.new_session)));
      resp->set_session(binding.new_session);
    }
    resp->set_worker_id(id);
    return Reconcile(db, id, *req, resp);
  });
  if (!s.ok()) return ToGrpc(s);
  resp->set_lease_ms(lease_.lease_ms);
  resp->set_heartbeat_interval_ms(std::max<int64_t>(lease_.lease_ms / 4, 10));
  scheduler_->Kick();
  changes_->Notify();
  return grpc::Status::OK;
}

grpc::Status WorkerGatewayService::Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                                             v1::HeartbeatResponse* resp) {
  if (grpc::Status s = CheckBounds(*req); !s.ok()) return s;
  bool handed_back = false;
  grpc::Status s = ToGrpc(store_->Write([&](Database* db) -> absl::Status {
    resp->Clear();
    NM_RETURN_IF_ERROR(KnownWorkerSession(db, ctx, req->worker_id()));
    NM_RETURN_IF_ERROR(TouchWorker(db, req->worker_id(), NowMs()));
    for (const v1::RunAttempt& ra : req->running()) {
      NM_ASSIGN_OR_RETURN(bool held, StillHeld(db, req->worker_id(), ra));
      if (!held) *resp->add_stop() = ra;
    }
    if (!req->leaving()) return absl::OkStatus();
    NM_ASSIGN_OR_RETURN(handed_back, Leave(db, req->worker_id(), req->running()));
    return absl::OkStatus();
  }));
  if (handed_back) scheduler_->Kick();
  if (req->leaving()) changes_->Notify();
  return s;
}

grpc::Status WorkerGatewayService::Assignments(grpc::ServerContext* ctx, const v1::AssignmentsRequest* req,
                                               grpc::ServerWriter<v1::Assignment>* writer) {
  if (grpc::Status s = CheckBounds(*req); !s.ok()) return s;
  int64_t worker = req->worker_id();
  absl::Status known = store_->Read([&](Database* db) -> absl::Status {
    NM_RETURN_IF_ERROR(KnownWorkerSession(db, ctx, worker));
    NM_ASSIGN_OR_RETURN(WorkerRecord w, LoadWorker(db, worker));
    if (!w.worker.alive())
      return absl::NotFoundError(absl::StrCat("worker ", worker, " lease expired; register again"));
    return absl::OkStatus();
  });
  if (!known.ok()) return ToGrpc(known);
  uint64_t token = hub_->Connect(worker);
  if (token == 0) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "coordinator shutting down");
  std::vector<v1::Assignment> batch;
  absl::Status s = store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(batch, PendingAssignments(db, worker));
    return absl::OkStatus();
  });
  scheduler_->Kick();
  // A run assigned between Connect and the read above arrives twice; send each attempt once. Model export
  // orders come from the hub only, each once.
  std::set<std::pair<int64_t, uint32_t>> sent;
  while (s.ok() && !ctx->IsCancelled()) {
    for (const v1::Assignment& a : batch) {
      if (!a.has_export_model() && !sent.emplace(a.run_id(), a.attempt()).second) continue;
      if (!writer->Write(a)) {
        s = absl::CancelledError("worker stream closed");
        break;
      }
    }
    batch.clear();
    if (s.ok() && !hub_->Next(worker, token, kStreamPoll, &batch)) break;
  }
  hub_->Disconnect(worker, token);
  return grpc::Status::OK;
}

grpc::Status WorkerGatewayService::StartRun(grpc::ServerContext* ctx, const v1::StartRunRequest* req,
                                            v1::Ack* resp) {
  if (grpc::Status s = CheckBounds(*req); !s.ok()) return s;
  absl::Status s = store_->Write([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(Reporter from, CheckReport(db, ctx, req->run()));
    if (from.node_rank != 0) return absl::OkStatus();  // A gang runs once node 0's ranks have started.
    return MarkRunning(db, req->run(), NowMs());
  });
  if (s.ok()) resp->set_accepted(1);
  if (s.ok()) scheduler_->ClearTakenPorts(req->run().run_id());
  changes_->Notify();
  return ToGrpc(s);
}

grpc::Status WorkerGatewayService::ReportMetrics(grpc::ServerContext* ctx,
                                                 grpc::ServerReader<v1::MetricReport>* reader,
                                                 v1::Ack* resp) {
  v1::MetricReport report;
  uint32_t accepted = 0;  // Stored points: those past the run's cap are dropped, yet answered OK.
  while (reader->Read(&report)) {
    if (absl::Status s = CutAndCheckReportBounds(&report); !s.ok()) {
      if (accepted > 0) changes_->Notify();
      return ToGrpc(s);
    }
    bool stored = false;
    absl::Status s = store_->Write([&](Database* db) -> absl::Status {
      NM_ASSIGN_OR_RETURN(Reporter from, CheckReport(db, ctx, report.run()));
      NM_ASSIGN_OR_RETURN(stored, TakeMetricReport(db, from.run, report, caps_, NowMs()));
      return absl::OkStatus();
    });
    if (!s.ok()) {
      if (accepted > 0) changes_->Notify();
      return ToGrpc(s);
    }
    accepted += stored;
    changes_->Notify();
  }
  resp->set_accepted(accepted);
  return grpc::Status::OK;
}

grpc::Status WorkerGatewayService::ReportLog(grpc::ServerContext* ctx, const v1::LogReport* req,
                                             v1::Ack* resp) {
  v1::LogReport cut;
  if (grpc::Status s = BoundReport(&req, &cut); !s.ok()) return s;
  int64_t stored = 0;  // Lines past the run's cap are dropped, yet answered OK.
  absl::Status s = store_->Write([&](Database* db) -> absl::Status {
    NM_RETURN_IF_ERROR(CheckReport(db, ctx, req->run()).status());
    NM_ASSIGN_OR_RETURN(
        stored, AppendLogs(db, req->run().run_id(), req->run().attempt(), req->lines(), NowMs(), caps_));
    return absl::OkStatus();
  });
  if (s.ok()) resp->set_accepted(static_cast<uint32_t>(stored));
  changes_->Notify();
  return ToGrpc(s);
}

// Node 0's hand-back of an attempt whose rendezvous port is taken, counted: once every port of the range has
// been tried, the attempt fails (a retry, from its checkpoint) instead of going round the range for ever.
v1::CompleteRunRequest WorkerGatewayService::PortsExhausted(const v1::CompleteRunRequest& req) {
  if (req.outcome() != v1::QUEUED || req.exit_code() != contract::kRendezvousPortTaken) return req;
  const std::optional<std::string> range = scheduler_->CountTakenPort(req.run().run_id());
  if (!range) return req;
  v1::CompleteRunRequest failed = req;
  failed.set_outcome(v1::FAILED);
  failed.set_exit_code(contract::kExitDistributed);
  failed.set_message(
      absl::StrCat(req.message(), "; every port of the rendezvous range ", *range,
                   " (nmserver --rendezvous_ports) was found taken by this run's attempts in a row:"
                   " free some of them on the workers, or give nmserver another range"));
  return failed;
}

grpc::Status WorkerGatewayService::CompleteRun(grpc::ServerContext* ctx, const v1::CompleteRunRequest* req,
                                               v1::Ack* resp) {
  v1::CompleteRunRequest cut;
  if (grpc::Status s = BoundReport(&req, &cut); !s.ok()) return s;
  int64_t sweep_id = 0;
  absl::Status s = store_->Write([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(Reporter from, CheckReport(db, ctx, req->run()));
    sweep_id = from.run.run.sweep_id();
    if (from.node_rank == 0) return CompleteAttempt(db, PortsExhausted(*req), NowMs());
    // Node 0 (global rank 0) decides a gang's success; any other node's failure, cancel or hand-back ends
    // the attempt for all: the other nodes are told to stop in their next heartbeat.
    if (req->outcome() == v1::SUCCEEDED) return absl::OkStatus();
    v1::CompleteRunRequest named = *req;
    named.set_message(absl::StrCat("node ", from.node_rank, ": ", req->message()));
    return CompleteAttempt(db, named, NowMs());
  });
  changes_->Notify();
  if (!s.ok()) return ToGrpc(s);
  resp->set_accepted(1);
  if (proposer_ != nullptr) proposer_->Notify(sweep_id);  // Proposed on the proposer's thread, not here.
  absl::StatusOr<int> placed = scheduler_->RunPass();     // Refill the freed slots now.
  if (!placed.ok()) scheduler_->Kick();                   // Retried by the scheduler thread.
  return grpc::Status::OK;
}

grpc::Status WorkerGatewayService::UploadModelExport(grpc::ServerContext* ctx,
                                                     grpc::ServerReader<v1::ModelExportUpload>* reader,
                                                     v1::Ack* resp) {
  if (exports_ == nullptr) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no model exports here");
  grpc::Status s = TakeModelExportUpload(store_, exports_, ctx, reader);
  if (s.ok()) resp->set_accepted(1);
  return s;
}

}  // namespace nmsparse::server
