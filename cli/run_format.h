// How runs, sweeps and metric points read in nmctl's tables.
#ifndef NMSPARSE_CLI_RUN_FORMAT_H_
#define NMSPARSE_CLI_RUN_FORMAT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/table_printer.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::cli {

// "recipe=srste nm=2:4 optimizer.lr=0.0002488", in axis order (validate's runs and a stored run's
// label_axes; by name for a run without them), numbers as FormatLabelValue shows them; names and values as
// common/visible_text.h shows them (one line). The one label text of every command.
std::string FormatLabels(const v1::Run& run);
std::string FormatLabels(const std::vector<std::pair<std::string, std::string>>& labels);

// "2026-11-21 07:40:09" (UTC), or "-" for 0.
std::string FormatTime(int64_t ms);

// "1m05s" between two instants, or "-" when one is missing.
std::string FormatDuration(int64_t from_ms, int64_t to_ms);
// "8s", "1m05s", "2h03m" (rounded to the second).
std::string FormatSeconds(double seconds);

// Who submitted a sweep or run: the token name, or "-" on a coordinator without tokens.
std::string Submitter(const std::string& submitted_by);

bool IsFinal(v1::RunState state);

// The run states' names, from the proto enum: "queued, assigned, ..., stopped_early".
std::string RunStateNamesText();

// A run state from its name, case-insensitive ("running", "SUCCEEDED").
absl::StatusOr<v1::RunState> ParseRunState(const std::string& name);

// Metric names in display order: loss, top1, top5, lr, images_per_s first, then the rest sorted.
std::vector<std::string> OrderMetricNames(std::vector<std::string> names);

// "loss=0.7 top1=0.81 ..." in display order, at most `max_items` of them (0: all).
std::string FormatValues(const google::protobuf::Map<std::string, double>& values, size_t max_items = 0);

// A point's epoch for people, numbered from 1 as watch and the report's figures number them (the metric
// lines and --json keep the trainer's 0-based index): "1" for the first epoch's lines, "-" for a final line.
std::string EpochText(const v1::MetricPoint& point);

// A run's metric curve: one row per point (kind, epoch, step, then every value and label).
// The per-layer fields of semi-structured 2:4 linears are left out: see SemiStructuredDecisions.
Table MetricCurveTable(const std::vector<v1::MetricPoint>& points);

// One row per epoch line that carries the sparse layers' diagnostics (docs/sparsity-method.md §11): N:M
// stage, D, flip rate since the previous log point, gradient norms at pruned and kept weights and their
// ratio. No rows for runs without them (dense runs, schedule.sparsity_diagnostics: false).
Table SparsityDiagnosticsTable(const std::vector<v1::MetricPoint>& points);

// "training 1.2e+12 FLOPs, inference 2.3e+09 FLOPs/image, 27978 parameters" from a run's final metrics,
// as the paper's tables report runs; empty when it has none of them.
std::string CostSummary(const google::protobuf::Map<std::string, double>& final_metrics);

// (layer, decision) of every semi-structured 2:4 linear in `point`'s labels, by layer name: the path its last
// forward took and why ("weight_2:4 masked dense (device cpu)"); empty for runs without such layers.
std::vector<std::pair<std::string, std::string>> SemiStructuredDecisions(const v1::MetricPoint& point);

// Where a run's model is and the command that exports it, for nmctl run: "  model:    <work_dir>/runs/42/
// checkpoint.pt on worker 3 ..." and "  export:   nmctl export-model 42 -o DIR"; a run that reused another's
// results names that run's checkpoint. Empty for a run that never ran on a worker.
std::string ModelLocationText(const v1::Run& run);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_RUN_FORMAT_H_
