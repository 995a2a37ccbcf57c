// What a report is made from: a sweep and its runs, each with its metric points. nmctl fills it over gRPC
// (GetSweep, ListRunCurves) and nmserver's dashboard from the same handlers, so both draw the same figures.
#ifndef NMSPARSE_REPORT_SWEEP_DATA_H_
#define NMSPARSE_REPORT_SWEEP_DATA_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/coordinator.pb.h"
#include "nmsparse/v1/sweep.pb.h"
#include "report/compare_pivot.h"

namespace nmsparse::report {

struct RunData {
  v1::Run run;                         // With its spec (N:M, model) and final metrics.
  std::vector<v1::MetricPoint> curve;  // Step, epoch and final points in sequence order.
};

struct SweepData {
  v1::Sweep sweep;
  std::vector<RunData> runs;
};

// Where the runs stopped early left off (report::LastEpochValue of `metric`), for the compare table.
StoppedValues StoppedRunValues(const SweepData& data, const std::string& metric);

// Appends one ListRunCurves page's runs to data->runs; a run the page before ended inside (the same run id
// as the last one) gets the rest of its points.
void AddCurvePage(v1::ListRunCurvesResponse* page, SweepData* data);

// One ListRunCurves call: over gRPC for nmctl, the handler in process for the dashboard.
using CurvePageReader =
    std::function<absl::StatusOr<v1::ListRunCurvesResponse>(const v1::ListRunCurvesRequest&)>;

// Appends every run of the sweep with its points to data->runs, a page at a time (bounded by nmserver): a
// sweep of 10k runs takes a few round trips and store reads, not one GetRun per run. An error names the
// sweep and the run the failed page started at.
absl::Status ReadRunCurves(int64_t sweep_id, const CurvePageReader& read_page, SweepData* data);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_SWEEP_DATA_H_
