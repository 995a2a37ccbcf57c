// What a report is made from: a sweep and its runs, each with its metric points. nmctl fills it over gRPC
// (GetSweep, ListRunCurves) and nmserver's dashboard from the same handlers, so both draw the same figures.
#ifndef NMSPARSE_REPORT_SWEEP_DATA_H_
#define NMSPARSE_REPORT_SWEEP_DATA_H_

#include <vector>

#include "nmsparse/v1/coordinator.pb.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::report {

struct RunData {
  v1::Run run;                         // With its spec (N:M, model) and final metrics.
  std::vector<v1::MetricPoint> curve;  // Step, epoch and final points in sequence order.
};

struct SweepData {
  v1::Sweep sweep;
  std::vector<RunData> runs;
};

// Appends one ListRunCurves page's runs to data->runs; a run the page before ended inside (the same run id
// as the last one) gets the rest of its points.
void AddCurvePage(v1::ListRunCurvesResponse* page, SweepData* data);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_SWEEP_DATA_H_
