#include "server/store/run_transitions.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "contract/nmtrain_exit_codes.h"
#include "server/store/event_table.h"
#include "server/store/sweep_table.h"

namespace nmsparse::server {
namespace {

std::string RunName(int64_t id, uint32_t attempt) { return absl::StrCat("run ", id, " attempt ", attempt); }

// Moves `cur` to `to` when it is still in cur's state and attempt, and records the change.
absl::Status SetState(Database* db, const RunRecord& cur, v1::RunState to, uint32_t attempt,
                      const std::string& reason, int64_t now_ms) {
  // The message says why a run ended or went back to the queue; assignment and start keep the last one.
  bool keep_message = IsActive(to);
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("UPDATE runs SET state = ?1, attempt = ?2, message = CASE WHEN ?7 THEN "
                                  "message ELSE ?3 END WHERE id = ?4 AND state = ?5 AND attempt = ?6"));
  NM_RETURN_IF_ERROR(st->Bind(1, static_cast<int>(to))
                         .Bind(2, attempt)
                         .BindText(3, reason)
                         .Bind(7, keep_message ? 1 : 0)
                         .Bind(4, cur.run.id())
                         .Bind(5, static_cast<int>(cur.run.state()))
                         .Bind(6, cur.run.attempt())
                         .Run());
  if (db->Changes() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat(RunName(cur.run.id(), cur.run.attempt()), " changed state"));
  }
  st.reset();
  return AppendStateChange(db, cur.run.id(), cur.run.state(), to, attempt, now_ms, reason);
}

absl::Status SetFinished(Database* db, int64_t run_id, int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE runs SET finished_at_ms = ? WHERE id = ?"));
  return st->Bind(1, now_ms).Bind(2, run_id).Run();
}

// Ends an attempt whose run was asked to stop: STOPPED_EARLY with the early-stopping reason when that is
// what asked, else CANCELLED. `how` says how the attempt ended. Neither is ever retried.
absl::Status EndRequestedStop(Database* db, const RunRecord& cur, const std::string& how, int64_t now_ms) {
  if (!cur.early_stop_reason.empty()) {
    NM_RETURN_IF_ERROR(
        SetState(db, cur, v1::STOPPED_EARLY, cur.run.attempt(),
                 how.empty() ? cur.early_stop_reason : cur.early_stop_reason + " (" + how + ")", now_ms));
  } else {
    NM_RETURN_IF_ERROR(SetState(db, cur, v1::CANCELLED, cur.run.attempt(),
                                how.empty() ? "cancelled" : "cancelled (" + how + ")", now_ms));
  }
  return SetFinished(db, cur.run.id(), now_ms);
}

// FAILED now, whatever retries remain; CANCELLED or STOPPED_EARLY instead when a stop was requested.
absl::Status FailForGood(Database* db, const RunRecord& cur, const std::string& reason, int64_t now_ms) {
  if (cur.cancel_requested) return EndRequestedStop(db, cur, reason, now_ms);
  NM_RETURN_IF_ERROR(SetState(db, cur, v1::FAILED, cur.run.attempt(), reason, now_ms));
  return SetFinished(db, cur.run.id(), now_ms);
}

// Queued runs of `cur`'s sweep with its content hash end SUCCEEDED with its results (see CompleteAttempt).
absl::Status ReuseForQueuedTwins(Database* db, const RunRecord& cur, const std::string& finals,
                                 int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(v1::Sweep sweep, LoadSweepWithoutGrid(db, cur.run.sweep_id()));
  if (sweep.spec().no_reuse()) return absl::OkStatus();
  std::vector<int64_t> twins;
  {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT id FROM runs WHERE content_hash = ? AND state = 1 AND "
                                             "sweep_id = ? ORDER BY id"));
    st->BindText(1, cur.run.content_hash()).Bind(2, cur.run.sweep_id());
    while (true) {
      NM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      twins.push_back(st->Int(0));
    }
  }
  const std::string reason = absl::StrCat("reused results of run ", cur.run.id(), " (same content hash)");
  for (int64_t id : twins) {
    NM_ASSIGN_OR_RETURN(RunRecord twin, LoadRun(db, id, RunDetail::kSummary));
    NM_RETURN_IF_ERROR(SetState(db, twin, v1::SUCCEEDED, twin.run.attempt(), reason, now_ms));
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE runs SET final_metrics = ?, finished_at_ms = ?, "
                                             "reused_from = ? WHERE id = ?"));
    NM_RETURN_IF_ERROR(st->BindBlob(1, finals).Bind(2, now_ms).Bind(3, cur.run.id()).Bind(4, id).Run());
  }
  return absl::OkStatus();
}

absl::Status Succeed(Database* db, const RunRecord& cur, const v1::CompleteRunRequest& req, int64_t now_ms) {
  // The final metrics are the attempt's `final` point, which the worker reported before CompleteRun.
  v1::MetricPoint finals;
  NM_ASSIGN_OR_RETURN(v1::MetricPoint last, LastFinalPoint(db, cur.run.id(), cur.run.attempt()));
  *finals.mutable_values() = last.values();
  // A run asked to stop whose training finished before its worker stopped it still ends CANCELLED, as the
  // cancel's answer counted it; its final metrics are kept.
  if (cur.cancel_requested) {
    NM_RETURN_IF_ERROR(
        EndRequestedStop(db, cur, "its training finished before its worker stopped it", now_ms));
  } else {
    NM_RETURN_IF_ERROR(SetState(db, cur, v1::SUCCEEDED, cur.run.attempt(), req.message(), now_ms));
  }
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("UPDATE runs SET final_metrics = ?, finished_at_ms = ? WHERE id = ?"));
  NM_RETURN_IF_ERROR(st->BindBlob(1, finals.SerializeAsString()).Bind(2, now_ms).Bind(3, cur.run.id()).Run());
  st.reset();
  if (cur.cancel_requested) return absl::OkStatus();
  return ReuseForQueuedTwins(db, cur, finals.SerializeAsString(), now_ms);
}

}  // namespace

bool IsFinal(v1::RunState s) {
  return s == v1::SUCCEEDED || s == v1::FAILED || s == v1::CANCELLED || s == v1::STOPPED_EARLY;
}
bool IsActive(v1::RunState s) { return s == v1::ASSIGNED || s == v1::RUNNING; }

absl::StatusOr<RunRecord> CheckAttempt(Database* db, const v1::RunAttempt& ra) {
  NM_ASSIGN_OR_RETURN(RunRecord r, LoadRun(db, ra.run_id(), RunDetail::kSummary));
  if (r.run.attempt() != ra.attempt()) {
    return absl::FailedPreconditionError(absl::StrCat(RunName(ra.run_id(), ra.attempt()),
                                                      " is stale: the current attempt is ", r.run.attempt()));
  }
  if (!IsActive(r.run.state())) {
    return absl::FailedPreconditionError(absl::StrCat(RunName(ra.run_id(), ra.attempt()), " is ",
                                                      v1::RunState_Name(r.run.state()),
                                                      ", not held by a worker"));
  }
  return r;
}

absl::StatusOr<v1::Assignment> AssignRun(Database* db, int64_t run_id, int64_t worker_id,
                                         const std::vector<uint32_t>& slots, int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(RunRecord cur, LoadRun(db, run_id, RunDetail::kFull));
  if (cur.run.state() != v1::QUEUED) {
    return absl::FailedPreconditionError(absl::StrCat("run ", run_id, " is not QUEUED"));
  }
  uint32_t attempt = cur.run.attempt() + 1;
  NM_RETURN_IF_ERROR(
      SetState(db, cur, v1::ASSIGNED, attempt, absl::StrCat("assigned to worker ", worker_id), now_ms));
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE runs SET worker_id = ?, slots = ?, assigned_at_ms = ?, "
                                           "gang = NULL WHERE id = ?"));
  NM_RETURN_IF_ERROR(
      st->Bind(1, worker_id).BindText(2, FormatSlots(slots)).Bind(3, now_ms).Bind(4, run_id).Run());
  v1::Assignment a;
  a.set_run_id(run_id);
  a.set_attempt(attempt);
  a.set_resolved_spec(cur.run.resolved_spec());
  for (uint32_t s : slots) a.add_slots(s);
  a.set_resume(attempt > 1);
  a.set_init_from_run(cur.run.lineage().parent_run_id());  // A fork starts from its parent's checkpoint.
  return a;
}

absl::StatusOr<std::vector<std::pair<int64_t, v1::Assignment>>> AssignGang(Database* db, int64_t run_id,
                                                                           const v1::Gang& gang,
                                                                           int64_t now_ms) {
  if (gang.members_size() < 2 || gang.members(0).node_rank() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("run ", run_id, ": a gang needs node 0 first and 2 nodes"));
  }
  const v1::GangMember& first = gang.members(0);
  NM_ASSIGN_OR_RETURN(v1::Assignment a,
                      AssignRun(db, run_id, first.worker_id(),
                                std::vector<uint32_t>(first.slots().begin(), first.slots().end()), now_ms));
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE runs SET gang = ? WHERE id = ?"));
  NM_RETURN_IF_ERROR(st->BindBlob(1, gang.SerializeAsString()).Bind(2, run_id).Run());
  std::vector<std::pair<int64_t, v1::Assignment>> out;
  for (const v1::GangMember& m : gang.members()) {
    v1::Assignment& mine = out.emplace_back(m.worker_id(), a).second;
    *mine.mutable_slots() = m.slots();
    mine.set_nodes(static_cast<uint32_t>(gang.members_size()));
    mine.set_node_rank(m.node_rank());
    mine.set_master_addr(gang.master_addr());
    mine.set_master_port(gang.master_port());
  }
  return out;
}

v1::Assignment AssignmentFor(const v1::Run& run, int64_t worker_id) {
  v1::Assignment a;
  a.set_run_id(run.id());
  a.set_attempt(run.attempt());
  a.set_resolved_spec(run.resolved_spec());
  *a.mutable_slots() = run.slots();
  a.set_resume(run.attempt() > 1);
  a.set_init_from_run(run.lineage().parent_run_id());
  if (run.gang().members_size() < 2) return a;
  for (const v1::GangMember& m : run.gang().members()) {
    if (m.worker_id() != worker_id) continue;
    *a.mutable_slots() = m.slots();
    a.set_node_rank(m.node_rank());
  }
  a.set_nodes(static_cast<uint32_t>(run.gang().members_size()));
  a.set_master_addr(run.gang().master_addr());
  a.set_master_port(run.gang().master_port());
  return a;
}

absl::Status MarkRunning(Database* db, const v1::RunAttempt& ra, int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(RunRecord cur, CheckAttempt(db, ra));
  if (cur.run.state() == v1::RUNNING) return absl::OkStatus();
  NM_RETURN_IF_ERROR(SetState(db, cur, v1::RUNNING, cur.run.attempt(), "ranks started", now_ms));
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE runs SET started_at_ms = ? WHERE id = ?"));
  return st->Bind(1, now_ms).Bind(2, ra.run_id()).Run();
}

absl::Status CompleteAttempt(Database* db, const v1::CompleteRunRequest& req, int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(RunRecord cur, CheckAttempt(db, req.run()));
  switch (req.outcome()) {
    case v1::SUCCEEDED:
      return Succeed(db, cur, req, now_ms);
    case v1::FAILED:
      if (contract::IsPermanentExit(req.exit_code())) {
        return FailForGood(db, cur,
                           absl::StrCat("attempt ", cur.run.attempt(), " failed (exit code ", req.exit_code(),
                                        ", ", contract::DescribeExit(req.exit_code()), ": not retried)",
                                        req.message().empty() ? "" : ": ", req.message()),
                           now_ms);
      }
      return LoseAttempt(db, cur,
                         absl::StrCat("attempt ", cur.run.attempt(), " failed (exit code ", req.exit_code(),
                                      ")", req.message().empty() ? "" : ": ", req.message()),
                         now_ms);
    case v1::CANCELLED:
      if (!cur.early_stop_reason.empty()) return EndRequestedStop(db, cur, "", now_ms);
      NM_RETURN_IF_ERROR(SetState(db, cur, v1::CANCELLED, cur.run.attempt(),
                                  req.message().empty() ? "cancelled" : req.message(), now_ms));
      return SetFinished(db, cur.run.id(), now_ms);
    case v1::QUEUED:
      return HandBackAttempt(db, cur,
                             absl::StrCat("attempt ", cur.run.attempt(), " handed back by its worker",
                                          req.message().empty() ? "" : ": ", req.message()),
                             now_ms);
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "outcome must be SUCCEEDED, FAILED, CANCELLED or QUEUED, not ", v1::RunState_Name(req.outcome())));
  }
}

absl::Status LoseAttempt(Database* db, const RunRecord& cur, const std::string& reason, int64_t now_ms) {
  if (cur.cancel_requested) return EndRequestedStop(db, cur, reason, now_ms);
  if (cur.retries_used >= cur.run.max_retries()) {
    return FailForGood(
        db, cur, absl::StrCat(reason, "; no retries left (max_retries ", cur.run.max_retries(), ")"), now_ms);
  }
  NM_RETURN_IF_ERROR(SetState(
      db, cur, v1::QUEUED, cur.run.attempt(),
      absl::StrCat(reason, "; requeued (retry ", cur.retries_used + 1, " of ", cur.run.max_retries(), ")"),
      now_ms));
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE runs SET worker_id = 0, slots = '', queued_at_ms = ?, "
                                           "retries_used = retries_used + 1 WHERE id = ?"));
  return st->Bind(1, now_ms).Bind(2, cur.run.id()).Run();
}

absl::Status HandBackAttempt(Database* db, const RunRecord& cur, const std::string& reason, int64_t now_ms) {
  if (cur.cancel_requested) return EndRequestedStop(db, cur, reason, now_ms);
  NM_RETURN_IF_ERROR(SetState(db, cur, v1::QUEUED, cur.run.attempt(),
                              absl::StrCat(reason, "; requeued (no retry used)"), now_ms));
  NM_ASSIGN_OR_RETURN(
      Stmt st, db->Prepare("UPDATE runs SET worker_id = 0, slots = '', queued_at_ms = ? WHERE id = ?"));
  return st->Bind(1, now_ms).Bind(2, cur.run.id()).Run();
}

absl::StatusOr<RunRecord> CancelRun(Database* db, int64_t run_id, const std::string& reason, int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(RunRecord cur, LoadRun(db, run_id, RunDetail::kSummary));
  if (IsFinal(cur.run.state())) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", run_id, " is already ", v1::RunState_Name(cur.run.state())));
  }
  if (cur.run.state() == v1::RUNNING) {
    NM_ASSIGN_OR_RETURN(Stmt st,
                        db->Prepare("UPDATE runs SET cancel_requested = 1, message = ? WHERE id = ?"));
    NM_RETURN_IF_ERROR(st->BindText(1, reason + "; waiting for its worker to stop it").Bind(2, run_id).Run());
  } else {
    NM_RETURN_IF_ERROR(SetState(db, cur, v1::CANCELLED, cur.run.attempt(), reason, now_ms));
    NM_RETURN_IF_ERROR(SetFinished(db, run_id, now_ms));
  }
  return LoadRun(db, run_id, RunDetail::kSummary);
}

absl::Status StopRunEarly(Database* db, const RunRecord& cur, const std::string& reason, int64_t now_ms) {
  if (cur.run.state() == v1::RUNNING) {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE runs SET cancel_requested = 1, early_stop_reason = ?1, "
                                             "message = ?2 WHERE id = ?3"));
    return st->BindText(1, reason)
        .BindText(2, reason + "; waiting for its worker to stop it")
        .Bind(3, cur.run.id())
        .Run();
  }
  if (cur.run.state() != v1::ASSIGNED) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", cur.run.id(), " is ", v1::RunState_Name(cur.run.state()), ", not held by a worker"));
  }
  NM_RETURN_IF_ERROR(SetState(db, cur, v1::STOPPED_EARLY, cur.run.attempt(), reason, now_ms));
  return SetFinished(db, cur.run.id(), now_ms);
}

absl::StatusOr<RunRecord> RequeueForResume(Database* db, int64_t run_id, const std::string& reason,
                                           int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(RunRecord cur, LoadRun(db, run_id, RunDetail::kSummary));
  const v1::RunState state = cur.run.state();
  if (state != v1::CANCELLED && state != v1::FAILED) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", run_id, " is ", v1::RunState_Name(state), ": only a CANCELLED or FAILED run can be resumed",
        state == v1::SUCCEEDED ? " (nmctl fork starts a new run from its checkpoint)" : ""));
  }
  NM_RETURN_IF_ERROR(SetState(db, cur, v1::QUEUED, cur.run.attempt(), reason, now_ms));
  // A resumed run is trained again: what its last attempt ended with no longer describes it, and it gets
  // its retry budget back (else one lost attempt after resuming an exhausted run would fail it for good).
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE runs SET worker_id = 0, slots = '', queued_at_ms = ?, "
                                           "finished_at_ms = 0, final_metrics = NULL, retries_used = 0, "
                                           "cancel_requested = 0 WHERE id = ?"));
  NM_RETURN_IF_ERROR(st->Bind(1, now_ms).Bind(2, run_id).Run());
  st.reset();
  return LoadRun(db, run_id, RunDetail::kSummary);
}

}  // namespace nmsparse::server
