#include "server/api/metric_intake.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "contract/metric_line.h"
#include "schemas/json_string.h"
#include "schemas/limits.h"
#include "server/search/early_stopping.h"

namespace nmsparse::server {
namespace {

bool KnownKind(const std::string& kind) {
  // Empty is read as "epoch" (points of agents older than the kinds).
  return kind.empty() || kind == contract::kKindEpoch || kind == contract::kKindStep ||
         kind == contract::kKindFinal || kind == contract::kKindProgress;
}

std::string NonFiniteText(double v) { return std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf"); }

}  // namespace

absl::Status CheckMetricPoint(const v1::MetricPoint& point) {
  if (!KnownKind(point.kind())) {
    return absl::InvalidArgumentError(
        absl::StrCat("point.kind: ", JsonString(point.kind()), " is not a metric kind; one of \"",
                     contract::kKindEpoch, "\", \"", contract::kKindStep, "\", \"", contract::kKindFinal,
                     "\", \"", contract::kKindProgress, "\""));
  }
  if (point.epoch() > limits::kMaxMetricEpoch) {
    return absl::InvalidArgumentError(absl::StrCat("point.epoch: ", point.epoch(), " is past the limit of ",
                                                   limits::FormatCount(limits::kMaxMetricEpoch)));
  }
  if (point.step() > static_cast<uint64_t>(limits::kMaxMetricStep)) {
    return absl::InvalidArgumentError(absl::StrCat("point.step: ", point.step(), " is past the limit of ",
                                                   limits::FormatCount(limits::kMaxMetricStep)));
  }
  // In name order, so that the error names the same value whatever the map's iteration order.
  const std::map<std::string, double> values(point.values().begin(), point.values().end());
  for (const auto& [name, value] : values) {
    if (std::isfinite(value)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "point.values[", JsonString(name), "]: ", NonFiniteText(value),
        " is not a finite number; a metric is stored only as one (a run that diverges ends FAILED "
        "with its trainer's message)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> TakeMetricReport(Database* db, const RunRecord& run, const v1::MetricReport& report,
                                      const EventCaps& caps, int64_t now_ms) {
  NM_RETURN_IF_ERROR(CheckMetricPoint(report.point()));
  const int64_t run_id = report.run().run_id();
  const uint32_t attempt = report.run().attempt();
  // Sent again (its answer was lost, or the stream failed after it): stored once, with its decision.
  NM_ASSIGN_OR_RETURN(int64_t earlier, StoredMetricSeq(db, run_id, attempt, report.point()));
  if (earlier != 0) return false;
  if (report.point().kind() == contract::kKindFinal) {
    NM_ASSIGN_OR_RETURN(v1::MetricPoint final_point, LastFinalPoint(db, run_id, attempt));
    if (final_point.seq() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "point.kind: run ", run_id, " attempt ", attempt, " has its final point already (epoch ",
          final_point.epoch(), ", step ", final_point.step(), "); an attempt has one"));
    }
  }
  NM_ASSIGN_OR_RETURN(int64_t seq, AppendMetric(db, run_id, attempt, report.point(), now_ms, caps));
  // In the same transaction: the point and the decision it leads to are stored together or not at all.
  NM_RETURN_IF_ERROR(ApplyEarlyStopping(db, run, report.point(), now_ms).status());
  return seq != 0;
}

}  // namespace nmsparse::server
