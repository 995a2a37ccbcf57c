#include "server/search/early_stopping.h"

#include <vector>

#include "common/status_macros.h"
#include "contract/metric_line.h"
#include "schemas/sweep_blocks.h"
#include "server/search/asha_policy.h"
#include "server/store/event_table.h"
#include "server/store/run_transitions.h"
#include "server/store/rung_table.h"
#include "server/store/sweep_table.h"

namespace nmsparse::server {
namespace {

// The decision, in the run's log, where `nmctl logs` shows it next to the trainer's epoch lines.
absl::Status LogDecision(Database* db, const RunRecord& run, const std::string& reason, int64_t now_ms) {
  google::protobuf::RepeatedPtrField<v1::LogLine> lines;
  lines.Add()->set_text("[nmserver] " + reason);
  return AppendLogs(db, run.run.id(), run.run.attempt(), lines, now_ms).status();
}

// Where a rung is decided: its sweep's policy, the rung and the epochs it is at.
struct RungAt {
  int64_t sweep_id;
  const v1::EarlyStopping& policy;
  int rung;
  uint32_t resource;
};

// The values at the rung other than the one at `skip`.
std::vector<double> Others(const std::vector<RungResult>& results, size_t skip) {
  std::vector<double> out;
  for (size_t i = 0; i < results.size(); ++i) {
    if (i != skip) out.push_back(results[i].value);
  }
  return out;
}

// Decides a result that waited for the rung's peers, now that they are in: among all `results` at the rung.
// A loser still training is asked to stop; one that has ended keeps its end (there is nothing left to save).
absl::Status DecideWaiting(Database* db, const RungAt& at, const std::vector<RungResult>& results, size_t i,
                           int64_t now_ms) {
  const AshaDecision d = DecideAsha(at.policy, at.rung, at.resource, results[i].value, Others(results, i));
  NM_ASSIGN_OR_RETURN(RunRecord waiting, LoadRun(db, results[i].run_id, RunDetail::kSummary));
  const v1::RunState state = waiting.run.state();
  const bool held = state == v1::RUNNING || state == v1::ASSIGNED;
  std::string reason = d.reason;
  if (!d.promoted && !held)
    absl::StrAppend(&reason, " (it had already ended ", v1::RunState_Name(state), ")");
  NM_RETURN_IF_ERROR(DecideWaitingRungResult(
      db, at.sweep_id, at.rung, RungResult{results[i].run_id, results[i].value, d.promoted, false, reason}));
  NM_RETURN_IF_ERROR(LogDecision(db, waiting, reason, now_ms));
  if (d.promoted || !held || waiting.cancel_requested) return absl::OkStatus();
  return StopRunEarly(db, waiting, d.reason, now_ms);
}

}  // namespace

absl::StatusOr<bool> ApplyEarlyStopping(Database* db, const RunRecord& run, const v1::MetricPoint& point,
                                        int64_t now_ms) {
  if (point.kind() != contract::kKindEpoch || run.cancel_requested) return false;
  NM_ASSIGN_OR_RETURN(v1::Sweep sweep, LoadSweepWithoutGrid(db, run.run.sweep_id()));
  const v1::EarlyStopping& policy = sweep.spec().early_stopping();
  if (policy.policy().empty()) return false;
  // The trainer numbers epochs from 0; the resource is the epochs completed.
  const uint32_t resource = point.epoch() + 1;
  const std::optional<int> rung = AshaRungAt(policy, AshaMaxResource(sweep.spec()), resource);
  if (!rung) return false;
  auto value = point.values().find(policy.metric());
  if (value == point.values().end()) return false;  // Not ranked: the run goes on (docs/sweeps.md).
  NM_ASSIGN_OR_RETURN(std::optional<RungResult> taken, FindRungResult(db, sweep.id(), *rung, run.run.id()));
  if (taken) return false;
  NM_ASSIGN_OR_RETURN(std::vector<RungResult> earlier, RungResults(db, sweep.id(), *rung));
  const RungAt at{sweep.id(), policy, *rung, resource};
  const size_t have = earlier.size() + 1;
  if (have < AshaMinPeers(policy)) {  // Too few peers to judge by: it goes on and is decided later.
    const std::string reason = AshaWaitReason(policy, *rung, resource, value->second, have);
    NM_RETURN_IF_ERROR(InsertRungResult(
        db, sweep.id(), *rung, RungResult{run.run.id(), value->second, false, true, reason}, now_ms));
    NM_RETURN_IF_ERROR(LogDecision(db, run, reason, now_ms));
    return false;
  }
  std::vector<double> values;
  for (const RungResult& r : earlier) values.push_back(r.value);
  const AshaDecision d = DecideAsha(policy, *rung, resource, value->second, values);
  RungResult result{run.run.id(), value->second, d.promoted, false, d.reason};
  NM_RETURN_IF_ERROR(InsertRungResult(db, sweep.id(), *rung, result, now_ms));
  NM_RETURN_IF_ERROR(LogDecision(db, run, d.reason, now_ms));
  // The result that completes the rung's peers decides those that waited for them, among the same values.
  earlier.push_back(result);
  for (size_t i = 0; i + 1 < earlier.size(); ++i) {
    if (earlier[i].waiting) NM_RETURN_IF_ERROR(DecideWaiting(db, at, earlier, i, now_ms));
  }
  if (d.promoted) return false;
  NM_RETURN_IF_ERROR(StopRunEarly(db, run, d.reason, now_ms));
  return true;
}

}  // namespace nmsparse::server
