#include "cli/run_format.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/metric_text.h"
#include "common/visible_text.h"
#include "contract/metric_line.h"
#include "contract/metric_names.h"
#include "contract/run_directory.h"
#include "report/compare_pivot.h"

namespace nmsparse::cli {
namespace {

// The per-layer fields of semi-structured 2:4 linears: `nmctl run` lists them in a block of their own, not as
// one column per layer.
bool PerLayer24(const std::string& name) {
  return absl::StartsWith(name, contract::kSemiStructuredLabelPrefix) ||
         absl::StartsWith(name, contract::kSpeedup24ValuePrefix);
}

}  // namespace

std::string FormatLabels(const v1::Run& run) { return FormatLabels(report::OrderedLabels(run)); }

std::string FormatLabels(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string out;
  for (const auto& [axis, value] : labels) {
    absl::StrAppend(&out, out.empty() ? "" : " ", VisibleText(axis), "=",
                    VisibleText(FormatLabelValue(value)));
  }
  return out;
}

std::string FormatTime(int64_t ms) {
  if (ms <= 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}

std::string Submitter(const std::string& submitted_by) {
  return submitted_by.empty() ? "-" : VisibleText(submitted_by);
}

std::string FormatDuration(int64_t from_ms, int64_t to_ms) {
  if (from_ms <= 0 || to_ms <= 0 || to_ms < from_ms) return "-";
  return FormatSeconds(static_cast<double>((to_ms - from_ms) / 1000));
}

std::string FormatSeconds(double seconds) {
  const auto s = static_cast<int64_t>(std::llround(std::max(seconds, 0.0)));
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
}

bool IsFinal(v1::RunState state) {
  return state == v1::SUCCEEDED || state == v1::FAILED || state == v1::CANCELLED ||
         state == v1::STOPPED_EARLY;
}

std::string RunStateNamesText() {
  const google::protobuf::EnumDescriptor* states = v1::RunState_descriptor();
  std::vector<std::string> names;
  for (int i = 0; i < states->value_count(); ++i) {
    if (states->value(i)->number() == v1::RUN_STATE_UNSPECIFIED) continue;
    names.push_back(absl::AsciiStrToLower(states->value(i)->name()));
  }
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<v1::RunState> ParseRunState(const std::string& name) {
  v1::RunState state;
  if (v1::RunState_Parse(absl::AsciiStrToUpper(name), &state) && state != v1::RUN_STATE_UNSPECIFIED)
    return state;
  return absl::InvalidArgumentError(
      absl::StrCat("--state: unknown run state '", name, "' (one of ", RunStateNamesText(), ")"));
}

std::vector<std::string> OrderMetricNames(std::vector<std::string> names) {
  static const std::vector<std::string> kFirst = {contract::kLoss,         contract::kTop1,
                                                  contract::kTop5,         contract::kEmaTop1,
                                                  contract::kLearningRate, contract::kImagesPerSecond};
  auto rank = [](const std::string& name) {
    auto it = std::find(kFirst.begin(), kFirst.end(), name);
    return it == kFirst.end() ? kFirst.size() : static_cast<size_t>(it - kFirst.begin());
  };
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return std::make_pair(rank(a), a) < std::make_pair(rank(b), b);
  });
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string FormatValues(const google::protobuf::Map<std::string, double>& values, size_t max_items) {
  std::vector<std::string> names;
  for (const auto& [name, value] : values) names.push_back(name);
  std::vector<std::string> parts;
  for (const std::string& name : OrderMetricNames(names)) {
    if (max_items > 0 && parts.size() == max_items) break;
    parts.push_back(absl::StrCat(VisibleText(name), "=", FormatMetric(values.at(name))));
  }
  return absl::StrJoin(parts, " ");
}

std::string EpochText(const v1::MetricPoint& point) {
  if (point.kind() == contract::kKindFinal && point.epoch() == 0) return "-";  // The final line has none.
  return absl::StrCat(point.epoch() + 1);
}

Table MetricCurveTable(const std::vector<v1::MetricPoint>& points) {
  std::set<std::string> value_names, label_names;
  for (const v1::MetricPoint& p : points) {
    for (const auto& [name, v] : p.values()) {
      if (!PerLayer24(name)) value_names.insert(name);
    }
    for (const auto& [name, v] : p.labels()) {
      if (!PerLayer24(name)) label_names.insert(name);
    }
  }
  const std::vector<std::string> values =
      OrderMetricNames(std::vector<std::string>(value_names.begin(), value_names.end()));
  std::vector<std::string> headers = {contract::kKindKey, contract::kEpochKey, contract::kStepKey};
  headers.insert(headers.end(), values.begin(), values.end());
  headers.insert(headers.end(), label_names.begin(), label_names.end());
  Table table(headers);
  for (const v1::MetricPoint& p : points) {
    std::vector<std::string> row = {p.kind(), EpochText(p), absl::StrCat(p.step())};
    for (const std::string& name : values) {
      auto it = p.values().find(name);
      row.push_back(it == p.values().end() ? "" : FormatMetric(it->second));
    }
    for (const std::string& name : label_names) {
      auto it = p.labels().find(name);
      row.push_back(it == p.labels().end() ? "" : it->second);
    }
    table.AddRow(row);
  }
  return table;
}

namespace {

std::string ValueText(const v1::MetricPoint& point, const std::string& name) {
  auto it = point.values().find(name);
  return it == point.values().end() ? "-" : FormatMetric(it->second);
}

}  // namespace

Table SparsityDiagnosticsTable(const std::vector<v1::MetricPoint>& points) {
  Table table({"EPOCH", "N:M", "D", "FLIP RATE", "|G| PRUNED", "|G| KEPT", "PRUNED/KEPT"});
  for (const v1::MetricPoint& p : points) {
    auto kept = p.values().find(contract::kGradNormKept);
    auto pruned = p.values().find(contract::kGradNormPruned);
    if (p.kind() != contract::kKindEpoch || kept == p.values().end() || pruned == p.values().end()) continue;
    auto stage = p.labels().find(contract::kNmStageLabel);
    table.AddRow({EpochText(p), stage == p.labels().end() ? "-" : stage->second,
                  ValueText(p, contract::kDecayValue), ValueText(p, contract::kFlipRate),
                  FormatMetric(pruned->second), FormatMetric(kept->second),
                  kept->second > 0 ? FormatMetric(pruned->second / kept->second) : "-"});
  }
  return table;
}

std::string CostSummary(const google::protobuf::Map<std::string, double>& final_metrics) {
  std::vector<std::string> parts;
  auto training = final_metrics.find(contract::kFlops);
  auto inference = final_metrics.find(contract::kInferenceFlops);
  auto params = final_metrics.find(contract::kParams);
  if (training != final_metrics.end())
    parts.push_back(absl::StrFormat("training %.4g FLOPs", training->second));
  if (inference != final_metrics.end())
    parts.push_back(absl::StrFormat("inference %.4g FLOPs/image", inference->second));
  if (params != final_metrics.end()) parts.push_back(absl::StrFormat("%.0f parameters", params->second));
  return absl::StrJoin(parts, ", ");
}

std::vector<std::pair<std::string, std::string>> SemiStructuredDecisions(const v1::MetricPoint& point) {
  std::map<std::string, std::string> by_layer;  // Sorted by layer name, as nmtrain lists them by module.
  const std::string prefix = contract::kSemiStructuredLabelPrefix;
  for (const auto& [name, text] : point.labels()) {
    if (absl::StartsWith(name, prefix)) by_layer[name.substr(prefix.size())] = text;
  }
  return {by_layer.begin(), by_layer.end()};
}

std::string ModelLocationText(const v1::Run& run) {
  const bool reused = run.reused_from() > 0;
  if (!reused && run.worker_id() == 0) return "";
  const std::string checkpoint =
      absl::StrCat(contract::RunDirectory("<work_dir>", reused ? run.reused_from() : run.id()), "/",
                   contract::kCheckpointFiles[0]);
  std::string text = reused ? absl::StrCat("  model:    ", checkpoint, ", run ", run.reused_from(),
                                           "'s, whose results this run reused, on the worker that ran it\n")
                            : absl::StrCat("  model:    ", checkpoint, " on worker ", run.worker_id(),
                                           " (its --work_dir)\n");
  const std::string command = absl::StrCat("nmctl export-model ", run.id(), " -o DIR");
  return text + (IsFinal(run.state()) ? absl::StrCat("  export:   ", command, "\n")
                                      : absl::StrCat("  export:   once the run has ended: ", command, "\n"));
}

}  // namespace nmsparse::cli
