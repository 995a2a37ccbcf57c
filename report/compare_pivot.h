// A sweep's final metric pivoted for comparison: one row per value of the first grid axis and one column per
// value of the second (the layout of the paper's tables), or a single column with one axis. `nmctl compare`
// prints it (cli/compare_table.h); the HTML report and its figures show it.
#ifndef NMSPARSE_REPORT_COMPARE_PIVOT_H_
#define NMSPARSE_REPORT_COMPARE_PIVOT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/proto_json.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::report {

struct ComparePivot {
  struct Cell {
    // The metric of each run of the cell that trained to the end (several when runs differ in a random axis,
    // a seed or an axis past the second).
    std::vector<double> values;
    // Per value: its run's labels other than the row axis ("nm=1:8 seed=1"), which pair it with the run of
    // another row trained under the same conditions (paired differences, report/paper_table.h).
    std::vector<std::string> pair_keys;
    int runs = 0;                                      // All runs in the cell.
    v1::RunState pending = v1::RUN_STATE_UNSPECIFIED;  // Most relevant state when none succeeded.
    // Runs stopped early at a rung, which have no final value: the metric at their last evaluated epoch and
    // that epoch (0-based). Shown in a cell without finished runs (issue 40), never pooled into the mean.
    std::vector<std::pair<double, uint32_t>> stopped;
    int succeeded() const { return static_cast<int>(values.size()); }
    double mean() const;
    // Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values.
    double stddev() const;
  };
  std::string metric;
  std::string row_axis;     // Empty without grid axes: then rows are runs.
  std::string column_axis;  // Empty with fewer than two grid axes: one column, the metric.
  std::vector<std::string> row_labels;
  std::vector<std::string> column_labels;
  // What each column is headed: its label, or its runs' N:M ("1:8") when the column axis sets the N:M keys
  // (a `sparsity.m_sparsity: [8, 16]` axis is labelled 8 and 16).
  std::vector<std::string> column_headers;
  std::vector<std::vector<Cell>> cells;  // [row][column].
};

// Where each run stopped early left off, by run id: its metric at its last evaluated epoch, and that epoch.
using StoppedValues = std::map<int64_t, std::pair<double, uint32_t>>;

// The last epoch point of `curve` that carries `metric`, as (value, epoch); nullopt when none does.
std::optional<std::pair<double, uint32_t>> LastEpochValue(const std::vector<v1::MetricPoint>& curve,
                                                          const std::string& metric);

// A cell whose runs were stopped early: "stopped at epoch 1: 41.2", or "stopped at epoch 1-2: 40.3 (n=3)" for
// the mean of several, each number written by `number`.
std::string StoppedCellText(const ComparePivot::Cell& cell, const std::function<std::string(double)>& number);

ComparePivot BuildComparePivot(const v1::SweepSpec& spec, const std::vector<v1::Run>& runs,
                               const std::string& metric, const StoppedValues& stopped = {});

// The grid axes past the second, which the pivot does not show: a cell holds the runs of all their values
// and would average them as if they were repeats. An axis whose every value sets only `seed` is a replicate
// (ReplicateGridAxes) and is not listed. `nmctl compare` refuses such a sweep unless told to pool each
// (--pool AXIS).
std::vector<std::string> PooledGridAxes(const v1::SweepSpec& spec);

// True when every value of `axis` sets only `seed`: its runs are replicates of one configuration, never a
// hyperparameter (report/replicates.h).
bool IsReplicateAxis(const v1::GridAxis& axis);

// The grid axes past the second whose every value sets only `seed`: replicates, which the table pools
// without being asked (its title says "pooled over seed").
std::vector<std::string> ReplicateGridAxes(const v1::SweepSpec& spec);

// A metric shown beside another for the same runs: `label` heads its columns ("top1 ema").
struct Counterpart {
  std::string metric;
  std::string label;
  bool final_only = false;  // Measured once, after the last epoch (the deployable model): no per-epoch value.
};

// The counterparts of `metric` (contract/metric_names.h) that some run reports in its final metrics, in this
// order: the model EMA's ("ema_top1" for "top1"; runs with model.ema) and the deployable model's
// ("deploy_top1" and "ema_deploy_top1" for "top1", "ema_deploy_top1" for "ema_top1"; N:M runs).
std::vector<Counterpart> Counterparts(const std::vector<v1::Run>& runs, const std::string& metric);

// Which top-1 is which, for the tables that show the deployable one, as `metric` or beside it (empty when
// neither is deployable).
std::string DeployableLegend(const std::string& metric, const std::vector<Counterpart>& counterparts);

// The metric of the paper's table for `metric`: the deployable model's top-1 (deploy_top1 for top1,
// ema_deploy_top1 for ema_top1) when some run reports it, so that sparse cells are the accuracy of the model
// as exported; `metric` otherwise. Dense runs report their top1 as deploy_top1.
std::string PaperTableMetric(const std::vector<v1::Run>& runs, const std::string& metric);

// A run's labels in axis order (its label_axes; sorted by name for a run without them, e.g. one built by a
// test), values as stored.
std::vector<std::pair<std::string, std::string>> OrderedLabels(const v1::Run& run);

// "run 12 recipe=dense nm=2:4 optimizer.lr=0.0002488": a run's id and its labels in axis order, numbers as
// common/metric_text.h's FormatLabelValue shows them (rows of a sweep without grid axes, legends of the
// report's figures).
std::string RunLabel(const v1::Run& run);

// A cell's text: the mean metric, and "± std (n=K)" when K > 1 succeeded runs share it, or the lower-case
// state of its runs while none has succeeded, or "-" without runs.
std::string CellText(const ComparePivot& pivot, const ComparePivot::Cell& cell);

// The table as ordered JSON: {"sweep_id", "metric", "row_axis", "column_axis", "columns": [...], "rows":
// [{"label", "cells": [{"column", "n", "mean", "std", "values", "runs", "state"}]}]}; mean and std are null
// while no run of the cell succeeded.
Json ComparePivotToJson(int64_t sweep_id, const ComparePivot& pivot);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_COMPARE_PIVOT_H_
