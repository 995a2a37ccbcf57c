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
  std::vector<double> values;
  for (const RungResult& r : earlier) values.push_back(r.value);
  const AshaDecision d = DecideAsha(policy, *rung, resource, value->second, values);
  RungResult result{run.run.id(), value->second, d.promoted, d.reason};
  NM_RETURN_IF_ERROR(InsertRungResult(db, sweep.id(), *rung, result, now_ms));
  NM_RETURN_IF_ERROR(LogDecision(db, run, d.reason, now_ms));
  if (d.promoted) return false;
  NM_RETURN_IF_ERROR(StopRunEarly(db, run, d.reason, now_ms));
  return true;
}

}  // namespace nmsparse::server
