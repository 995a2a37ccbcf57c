// The Coordinator gRPC service (proto/nmsparse/v1/coordinator.proto): what people and nmctl call.
#ifndef NMSPARSE_SERVER_API_COORDINATOR_SERVICE_H_
#define NMSPARSE_SERVER_API_COORDINATOR_SERVICE_H_

#include "nmsparse/v1/coordinator.grpc.pb.h"
#include "server/api/model_export_relay.h"
#include "server/change_signal.h"
#include "server/cluster/worker_pool.h"
#include "server/scheduling/assignment_hub.h"
#include "server/scheduling/scheduler.h"
#include "server/store/store.h"
#include "server/sweeps/sweep_expander.h"

namespace nmsparse::server {

class CoordinatorService final : public v1::Coordinator::Service {
 public:
  // `pool` may be null (no launcher: workers are started by hand); `hub` and `exports` too, where the
  // service exports no model (ExportModel answers UNIMPLEMENTED).
  CoordinatorService(Store* store, Scheduler* scheduler, WorkerPool* pool, ChangeSignal* changes,
                     SweepExpander expand, int64_t max_runs_per_sweep, AssignmentHub* hub = nullptr,
                     ModelExportRelay* exports = nullptr)
      : store_(store),
        scheduler_(scheduler),
        pool_(pool),
        changes_(changes),
        expand_(std::move(expand)),
        max_runs_per_sweep_(max_runs_per_sweep),
        hub_(hub),
        exports_(exports) {}

  grpc::Status SubmitSweep(grpc::ServerContext*, const v1::SubmitSweepRequest* req,
                           v1::SubmitSweepResponse* resp) override;
  grpc::Status GetSweep(grpc::ServerContext*, const v1::GetSweepRequest* req, v1::Sweep* resp) override;
  grpc::Status ListSweeps(grpc::ServerContext*, const v1::ListSweepsRequest* req,
                          v1::ListSweepsResponse* resp) override;
  grpc::Status ListRuns(grpc::ServerContext*, const v1::ListRunsRequest* req,
                        v1::ListRunsResponse* resp) override;
  grpc::Status GetRun(grpc::ServerContext*, const v1::GetRunRequest* req, v1::GetRunResponse* resp) override;
  grpc::Status ListRunCurves(grpc::ServerContext*, const v1::ListRunCurvesRequest* req,
                             v1::ListRunCurvesResponse* resp) override;
  grpc::Status WatchRun(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                        grpc::ServerWriter<v1::RunEvent>* writer) override;
  grpc::Status GetLogs(grpc::ServerContext*, const v1::GetLogsRequest* req,
                       v1::GetLogsResponse* resp) override;
  grpc::Status CancelSweep(grpc::ServerContext*, const v1::CancelSweepRequest* req,
                           v1::CancelSweepResponse* resp) override;
  grpc::Status CancelRun(grpc::ServerContext*, const v1::CancelRunRequest* req,
                         v1::CancelRunResponse* resp) override;
  grpc::Status ResumeRun(grpc::ServerContext*, const v1::ResumeRunRequest* req,
                         v1::ResumeRunResponse* resp) override;
  grpc::Status ForkRun(grpc::ServerContext*, const v1::ForkRunRequest* req,
                       v1::ForkRunResponse* resp) override;
  grpc::Status GetBest(grpc::ServerContext*, const v1::GetBestRequest* req,
                       v1::GetBestResponse* resp) override;
  grpc::Status Export(grpc::ServerContext*, const v1::ExportRequest* req, v1::ExportResponse* resp) override;
  grpc::Status ExportModel(grpc::ServerContext* ctx, const v1::ExportModelRequest* req,
                           grpc::ServerWriter<v1::ModelFileChunk>* writer) override;
  grpc::Status ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest* req,
                           v1::ListWorkersResponse* resp) override;
  grpc::Status GetCluster(grpc::ServerContext*, const v1::GetClusterRequest* req,
                          v1::ClusterStatus* resp) override;

 private:
  // Sets `waiting` on the waiting multi-node runs among `runs`: why they wait.
  absl::Status FillGangWaits(Database* db, std::vector<RunRecord>* runs) const;
  // Runs were queued: the scheduler, the worker pool and watchers look again.
  void Queued();

  Store* store_;
  Scheduler* scheduler_;
  WorkerPool* pool_;
  ChangeSignal* changes_;
  SweepExpander expand_;
  int64_t max_runs_per_sweep_;
  AssignmentHub* hub_;
  ModelExportRelay* exports_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_API_COORDINATOR_SERVICE_H_
