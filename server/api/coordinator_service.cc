#include "server/api/coordinator_service.h"

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "common/status_macros.h"
#include "contract/metric_direction.h"
#include "google/protobuf/unknown_field_set.h"
#include "schemas/limits.h"
#include "schemas/metric_objective.h"
#include "schemas/request_bounds.h"
#include "schemas/sweep_blocks.h"
#include "server/api/export.h"
#include "server/api/grpc_status.h"
#include "server/api/model_export_call.h"
#include "server/auth/caller.h"
#include "server/store/clock.h"
#include "server/store/event_table.h"
#include "server/store/run_curves.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/sweep_table.h"
#include "server/store/worker_table.h"
#include "server/sweeps/run_fork.h"
#include "server/sweeps/sweep_submission.h"

namespace nmsparse::server {
namespace {

constexpr uint32_t kWatchBatch = 500;
constexpr absl::Duration kWatchPoll = absl::Milliseconds(200);

// A page bound a request asks for: 0 is the bound itself, more than it is refused.
absl::StatusOr<uint32_t> PageBound(uint32_t asked, int64_t bound, const char* field) {
  if (asked == 0) return static_cast<uint32_t>(bound);
  if (asked > bound) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", asked, " is more than the limit of ",
                                                   limits::FormatCount(bound), " a page"));
  }
  return asked;
}

absl::StatusOr<std::vector<RunRecord>> SweepRuns(Database* db, int64_t sweep_id, v1::RunState state,
                                                 RunDetail detail = RunDetail::kSummary) {
  NM_RETURN_IF_ERROR(LoadSweep(db, sweep_id).status());  // NotFound for an unknown sweep.
  RunFilter f;
  f.sweep_id = sweep_id;
  f.state = state;
  return QueryRuns(db, f, detail);
}

// Every handler starts here. The answer carries nmserver's wire version (common/version.h), and a caller
// that names another is refused; callers that name none (in-process tests, the dashboard) are served, an old
// nmctl's sweep being known by its spec (SentByWireVersion1). Then a request past a field's bound
// (schemas/request_bounds.h) is refused before anything is read or stored.
grpc::Status CheckCall(grpc::ServerContext* ctx, const google::protobuf::Message& request) {
  ctx->AddInitialMetadata(kWireVersionMetadata, std::to_string(kWireVersion));
  const auto& metadata = ctx->client_metadata();
  if (auto it = metadata.find(kWireVersionMetadata); it != metadata.end()) {
    int version = 0;
    if (!absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &version) ||
        version != kWireVersion) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, WireVersionMismatch(version, kWireVersion));
    }
  }
  return ToGrpc(CheckRequestBounds(request));
}

// Wire version 1's nmctl sent a sweep's base as an ExperimentSpec message, field 2 of v1.SweepSpec, now
// reserved: it arrives as an unknown field.
bool SentByWireVersion1(const v1::SweepSpec& spec) {
  const google::protobuf::UnknownFieldSet& unknown = spec.GetReflection()->GetUnknownFields(spec);
  for (int i = 0; i < unknown.field_count(); ++i) {
    if (unknown.field(i).number() == 2) return true;
  }
  return false;
}

std::optional<double> Metric(const v1::Run& run, const std::string& name) {
  auto it = run.final_metrics().find(name);
  if (it == run.final_metrics().end()) return std::nullopt;
  return it->second;
}

}  // namespace

grpc::Status CoordinatorService::SubmitSweep(grpc::ServerContext* ctx, const v1::SubmitSweepRequest* req,
                                             v1::SubmitSweepResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  if (SentByWireVersion1(req->spec())) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, WireVersionMismatch(1, kWireVersion));
  }
  // The random axes as nmctl checks them (schemas/sweep_blocks.h).
  if (grpc::Status s = ToGrpc(CheckRandomAxes(req->spec())); !s.ok()) return s;
  absl::StatusOr<v1::SubmitSweepResponse> out =
      server::SubmitSweep(store_, expand_, max_runs_per_sweep_, *req, OwnerOf(CallerOf(ctx)));
  if (!out.ok()) return ToGrpc(out.status());
  *resp = std::move(*out);
  if (!req->dry_run() && !resp->existing()) Queued();
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::GetSweep(grpc::ServerContext* ctx, const v1::GetSweepRequest* req,
                                          v1::Sweep* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  return ToGrpc(store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(*resp, LoadSweep(db, req->sweep_id()));
    return absl::OkStatus();
  }));
}

grpc::Status CoordinatorService::ListSweeps(grpc::ServerContext* ctx, const v1::ListSweepsRequest* req,
                                            v1::ListSweepsResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  return ToGrpc(store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(std::vector<v1::Sweep> sweeps, server::ListSweeps(db));
    for (v1::Sweep& s : sweeps) *resp->add_sweeps() = std::move(s);
    return absl::OkStatus();
  }));
}

grpc::Status CoordinatorService::ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                                          v1::ListRunsResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  return ToGrpc(store_->Read([&](Database* db) -> absl::Status {
    if (req->sweep_id() != 0) NM_RETURN_IF_ERROR(LoadSweep(db, req->sweep_id()).status());
    RunFilter f;
    f.sweep_id = req->sweep_id();
    f.state = req->state();
    f.limit = req->limit();
    f.offset = req->offset();
    NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, QueryRuns(db, f, RunDetail::kSummary));
    NM_RETURN_IF_ERROR(FillQueuePositions(db, &runs));
    NM_RETURN_IF_ERROR(FillGangWaits(db, &runs));
    for (RunRecord& r : runs) *resp->add_runs() = std::move(r.run);
    return absl::OkStatus();
  }));
}

grpc::Status CoordinatorService::GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req,
                                        v1::GetRunResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  return ToGrpc(store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(RunRecord r, LoadRun(db, req->run_id(), RunDetail::kFull));
    std::vector<RunRecord> one = {std::move(r)};
    NM_RETURN_IF_ERROR(FillQueuePositions(db, &one));
    NM_RETURN_IF_ERROR(FillGangWaits(db, &one));
    *resp->mutable_run() = std::move(one[0].run);
    NM_ASSIGN_OR_RETURN(std::vector<v1::StateChange> history, StateHistory(db, req->run_id()));
    for (v1::StateChange& c : history) *resp->add_history() = std::move(c);
    if (req->include_metrics()) {
      NM_ASSIGN_OR_RETURN(std::vector<v1::MetricPoint> points, MetricPoints(db, req->run_id(), 0));
      for (v1::MetricPoint& p : points) *resp->add_metrics() = std::move(p);
    }
    return absl::OkStatus();
  }));
}

grpc::Status CoordinatorService::ListRunCurves(grpc::ServerContext* ctx, const v1::ListRunCurvesRequest* req,
                                               v1::ListRunCurvesResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  return ToGrpc([&]() -> absl::Status {
    CurvePageBounds bounds;
    bounds.point_bytes = limits::kMaxCurvePagePointBytes;
    NM_ASSIGN_OR_RETURN(bounds.runs, PageBound(req->max_runs(), limits::kMaxCurvePageRuns, "max_runs"));
    NM_ASSIGN_OR_RETURN(bounds.points,
                        PageBound(req->max_points(), limits::kMaxCurvePagePoints, "max_points"));
    return store_->Read([&](Database* db) -> absl::Status {
      NM_RETURN_IF_ERROR(LoadSweep(db, req->sweep_id()).status());  // NotFound for an unknown sweep.
      NM_ASSIGN_OR_RETURN(CurvePage page,
                          ReadCurvePage(db, req->sweep_id(), {req->from_run(), req->after_seq()}, bounds));
      for (RunCurve& c : page.runs) {
        v1::RunCurve* out = resp->add_runs();
        *out->mutable_run() = std::move(c.record.run);
        for (v1::MetricPoint& p : c.points) *out->add_metrics() = std::move(p);
      }
      resp->set_more(page.more);
      resp->set_next_from_run(page.next.from_run);
      resp->set_next_after_seq(page.next.after_seq);
      return absl::OkStatus();
    });
  }());
}

grpc::Status CoordinatorService::WatchRun(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                                          grpc::ServerWriter<v1::RunEvent>* writer) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  int64_t next = std::max<int64_t>(req->from_seq(), 0);
  while (!ctx->IsCancelled() && !changes_->closed()) {
    uint64_t version = changes_->version();
    std::vector<v1::RunEvent> events;
    bool final = false;
    absl::Status s = store_->Read([&](Database* db) -> absl::Status {
      // The run's state is read before its events, so a final state seen here has its events in the batch.
      NM_ASSIGN_OR_RETURN(RunRecord r, LoadRun(db, req->run_id(), RunDetail::kSummary));
      final = IsFinal(r.run.state());
      NM_ASSIGN_OR_RETURN(events, EventsFrom(db, req->run_id(), next, kWatchBatch));
      return absl::OkStatus();
    });
    if (!s.ok()) return ToGrpc(s);
    for (const v1::RunEvent& e : events) {
      if (!writer->Write(e)) return grpc::Status(grpc::StatusCode::CANCELLED, "watcher went away");
      int64_t seq = e.has_metric() ? e.metric().seq() : e.has_state() ? e.state().seq() : e.log().seq();
      next = std::max(next, seq + 1);
    }
    if (final && events.size() < kWatchBatch) return grpc::Status::OK;
    if (events.empty()) changes_->WaitChange(version, kWatchPoll);
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "watch ended before the run finished");
}

grpc::Status CoordinatorService::GetLogs(grpc::ServerContext* ctx, const v1::GetLogsRequest* req,
                                         v1::GetLogsResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  return ToGrpc(store_->Read([&](Database* db) -> absl::Status {
    NM_RETURN_IF_ERROR(LoadRun(db, req->run_id(), RunDetail::kSummary).status());
    NM_ASSIGN_OR_RETURN(std::vector<v1::LogLine> lines,
                        LogLines(db, req->run_id(), req->from_seq(), req->limit()));
    for (v1::LogLine& l : lines) *resp->add_lines() = std::move(l);
    return absl::OkStatus();
  }));
}

grpc::Status CoordinatorService::CancelSweep(grpc::ServerContext* ctx, const v1::CancelSweepRequest* req,
                                             v1::CancelSweepResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  const Caller caller = CallerOf(ctx);
  absl::Status s = store_->Write([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(SweepOwner owner, LoadSweepOwner(db, req->sweep_id()));
    NM_RETURN_IF_ERROR(CheckMayCancel(caller, owner, absl::StrCat("sweep ", req->sweep_id())));
    NM_RETURN_IF_ERROR(MarkSweepCancelled(db, req->sweep_id()));
    NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs,
                        SweepRuns(db, req->sweep_id(), v1::RUN_STATE_UNSPECIFIED));
    uint32_t cancelled = 0, stopping = 0;
    int64_t now = NowMs();
    for (const RunRecord& r : runs) {
      if (IsFinal(r.run.state()) || r.cancel_requested) continue;
      NM_ASSIGN_OR_RETURN(
          RunRecord after,
          server::CancelRun(db, r.run.id(), absl::StrCat("sweep ", req->sweep_id(), " cancelled"), now));
      ++cancelled;
      stopping += after.run.state() == v1::CANCELLED ? 0 : 1;
    }
    resp->set_cancelled(cancelled);
    resp->set_stopping(stopping);
    return absl::OkStatus();
  });
  changes_->Notify();
  return ToGrpc(s);
}

grpc::Status CoordinatorService::CancelRun(grpc::ServerContext* ctx, const v1::CancelRunRequest* req,
                                           v1::CancelRunResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  const Caller caller = CallerOf(ctx);
  absl::Status s = store_->Write([&](Database* db) -> absl::Status {
    // Cancelling a run that has ended is not an error: it is left as it was, and the answer says so.
    NM_ASSIGN_OR_RETURN(RunRecord before, LoadRun(db, req->run_id(), RunDetail::kSummary));
    NM_ASSIGN_OR_RETURN(SweepOwner owner, LoadSweepOwner(db, before.run.sweep_id()));
    NM_RETURN_IF_ERROR(CheckMayCancel(caller, owner, absl::StrCat("run ", req->run_id())));
    if (IsFinal(before.run.state())) {
      resp->set_already_ended(true);
      *resp->mutable_run() = std::move(before.run);
      return absl::OkStatus();
    }
    NM_ASSIGN_OR_RETURN(RunRecord r, server::CancelRun(db, req->run_id(), "cancelled by request", NowMs()));
    *resp->mutable_run() = std::move(r.run);
    return absl::OkStatus();
  });
  changes_->Notify();
  return ToGrpc(s);
}

grpc::Status CoordinatorService::ResumeRun(grpc::ServerContext* ctx, const v1::ResumeRunRequest* req,
                                           v1::ResumeRunResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  const Caller caller = CallerOf(ctx);
  absl::Status s = store_->Write([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(RunRecord before, LoadRun(db, req->run_id(), RunDetail::kSummary));
    NM_ASSIGN_OR_RETURN(SweepOwner owner, LoadSweepOwner(db, before.run.sweep_id()));
    NM_RETURN_IF_ERROR(CheckMayChange(caller, "resume", owner, absl::StrCat("run ", req->run_id())));
    const std::string reason =
        absl::StrCat("resumed by ", caller.name.empty() ? "request" : "'" + caller.name + "'", ": attempt ",
                     before.run.attempt() + 1, " continues from the run's last checkpoint");
    NM_ASSIGN_OR_RETURN(RunRecord r, RequeueForResume(db, req->run_id(), reason, NowMs()));
    *resp->mutable_run() = std::move(r.run);
    return absl::OkStatus();
  });
  if (s.ok()) Queued();
  return ToGrpc(s);
}

grpc::Status CoordinatorService::ForkRun(grpc::ServerContext* ctx, const v1::ForkRunRequest* req,
                                         v1::ForkRunResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  absl::StatusOr<v1::ForkRunResponse> out = server::ForkRun(store_, expand_, *req, CallerOf(ctx));
  if (!out.ok()) return ToGrpc(out.status());
  *resp = *std::move(out);
  Queued();
  return grpc::Status::OK;
}

void CoordinatorService::Queued() {
  scheduler_->Kick();
  if (pool_) pool_->Wake();
  changes_->Notify();
}

grpc::Status CoordinatorService::GetBest(grpc::ServerContext* ctx, const v1::GetBestRequest* req,
                                         v1::GetBestResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  if (req->metric().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "metric: empty; name a final metric such as top1");
  }
  if (req->minimize() && req->maximize()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "minimize, maximize: set one of them, not both");
  }
  absl::StatusOr<bool> maximize = ObjectiveMaximizes(req->metric(),
                                                     req->minimize()   ? "min"
                                                     : req->maximize() ? "max"
                                                                       : "",
                                                     "metric", "set maximize or minimize");
  if (!maximize.ok()) return ToGrpc(maximize.status());
  return ToGrpc(store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, SweepRuns(db, req->sweep_id(), v1::SUCCEEDED));
    std::vector<std::pair<double, v1::Run*>> ranked;
    for (RunRecord& r : runs) {
      if (std::optional<double> v = Metric(r.run, req->metric())) ranked.emplace_back(*v, &r.run);
    }
    // A non-finite value (a diverged run, or one stored before the gateway refused them) ranks last.
    std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
      return contract::RanksBefore(a.first, b.first, *maximize);
    });
    size_t k = std::min<size_t>(req->k() == 0 ? 1 : req->k(), ranked.size());
    for (size_t i = 0; i < k; ++i) *resp->add_runs() = *ranked[i].second;
    return absl::OkStatus();
  }));
}

grpc::Status CoordinatorService::Export(grpc::ServerContext* ctx, const v1::ExportRequest* req,
                                        v1::ExportResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  return ToGrpc(store_->Read([&](Database* db) -> absl::Status {
    // With each run's spec: the CSV's config columns.
    NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs,
                        SweepRuns(db, req->sweep_id(), v1::RUN_STATE_UNSPECIFIED, RunDetail::kFull));
    std::vector<ExportRun> rows;
    for (RunRecord& r : runs) {
      ExportRun e{std::move(r.run), std::move(r.label_order), {}};
      if (req->include_curves()) {
        NM_ASSIGN_OR_RETURN(e.curve, MetricPoints(db, e.run.id(), 0));
      }
      rows.push_back(std::move(e));
    }
    resp->set_content(req->format() == v1::ExportRequest::JSON
                          ? ExportJson(req->sweep_id(), rows, req->include_curves())
                          : ExportCsv(rows, req->include_curves()));
    return absl::OkStatus();
  }));
}

grpc::Status CoordinatorService::ExportModel(grpc::ServerContext* ctx, const v1::ExportModelRequest* req,
                                             grpc::ServerWriter<v1::ModelFileChunk>* writer) {
  if (hub_ == nullptr || exports_ == nullptr) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "this coordinator exports no models");
  }
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  return RelayModelExport(store_, hub_, exports_, ctx, *req, writer);
}

grpc::Status CoordinatorService::ListWorkers(grpc::ServerContext* ctx, const v1::ListWorkersRequest* req,
                                             v1::ListWorkersResponse* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  return ToGrpc(store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(std::vector<v1::Worker> workers, WorkersWithRuns(db));
    for (v1::Worker& w : workers) *resp->add_workers() = std::move(w);
    return absl::OkStatus();
  }));
}

grpc::Status CoordinatorService::GetCluster(grpc::ServerContext* ctx, const v1::GetClusterRequest* req,
                                            v1::ClusterStatus* resp) {
  if (grpc::Status s = CheckCall(ctx, *req); !s.ok()) return s;
  if (pool_) *resp = pool_->Status();
  // Why waiting multi-node runs wait, on the live workers (with or without a pool).
  return ToGrpc(store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(auto reasons, scheduler_->GangWaitReasons(db));
    for (const auto& [run, why] : reasons) resp->add_waiting(absl::StrCat("run ", run, " waits: ", why));
    return absl::OkStatus();
  }));
}

absl::Status CoordinatorService::FillGangWaits(Database* db, std::vector<RunRecord>* runs) const {
  bool any = false;
  for (const RunRecord& r : *runs) any |= r.run.state() == v1::QUEUED && r.nodes > 1;
  if (!any) return absl::OkStatus();
  NM_ASSIGN_OR_RETURN(auto reasons, scheduler_->GangWaitReasons(db));
  for (RunRecord& r : *runs) {
    auto it = reasons.find(r.run.id());
    if (r.run.state() == v1::QUEUED && it != reasons.end()) r.run.set_waiting(it->second);
  }
  return absl::OkStatus();
}

}  // namespace nmsparse::server
