// The WorkerGateway gRPC service (proto/nmsparse/v1/worker_gateway.proto): what nmworker agents call.
//
// Fencing: every report names a run and attempt, and is refused with FAILED_PRECONDITION unless that attempt
// is the run's current one and the run is still held by a worker. Attempt numbers grow at each assignment, so
// an attempt names one assignment to one worker. Every call after Register presents the registration's
// session (server/auth/worker_session.h): a report is taken only from the worker that holds its attempt.
#ifndef NMSPARSE_SERVER_API_WORKER_GATEWAY_SERVICE_H_
#define NMSPARSE_SERVER_API_WORKER_GATEWAY_SERVICE_H_

#include "nmsparse/v1/worker_gateway.grpc.pb.h"
#include "server/api/model_export_relay.h"
#include "server/change_signal.h"
#include "server/scheduling/assignment_hub.h"
#include "server/scheduling/lease_manager.h"
#include "server/scheduling/scheduler.h"
#include "server/store/event_table.h"
#include "server/store/store.h"
#include "server/sweeps/search_proposer.h"

namespace nmsparse::server {

class WorkerGatewayService final : public v1::WorkerGateway::Service {
 public:
  WorkerGatewayService(Store* store, Scheduler* scheduler, AssignmentHub* hub, ChangeSignal* changes,
                       LeaseOptions lease, EventCaps caps, SearchProposer* proposer = nullptr,
                       ModelExportRelay* exports = nullptr)
      : store_(store),
        scheduler_(scheduler),
        hub_(hub),
        changes_(changes),
        lease_(lease),
        caps_(caps),
        proposer_(proposer),
        exports_(exports) {}

  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest* req,
                        v1::RegisterResponse* resp) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* req,
                         v1::HeartbeatResponse* resp) override;
  grpc::Status Assignments(grpc::ServerContext* ctx, const v1::AssignmentsRequest* req,
                           grpc::ServerWriter<v1::Assignment>* writer) override;
  grpc::Status StartRun(grpc::ServerContext* ctx, const v1::StartRunRequest* req, v1::Ack* resp) override;
  grpc::Status ReportMetrics(grpc::ServerContext* ctx, grpc::ServerReader<v1::MetricReport>* reader,
                             v1::Ack* resp) override;
  grpc::Status ReportLog(grpc::ServerContext* ctx, const v1::LogReport* req, v1::Ack* resp) override;
  grpc::Status CompleteRun(grpc::ServerContext* ctx, const v1::CompleteRunRequest* req,
                           v1::Ack* resp) override;
  grpc::Status UploadModelExport(grpc::ServerContext* ctx, grpc::ServerReader<v1::ModelExportUpload>* reader,
                                 v1::Ack* resp) override;

 private:
  v1::CompleteRunRequest PortsExhausted(const v1::CompleteRunRequest& req);

  Store* store_;
  Scheduler* scheduler_;
  AssignmentHub* hub_;
  ChangeSignal* changes_;
  LeaseOptions lease_;
  EventCaps caps_;
  SearchProposer* proposer_;   // Told when a run of a search sweep ends; null in some tests.
  ModelExportRelay* exports_;  // Null: uploads are refused.
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_API_WORKER_GATEWAY_SERVICE_H_
