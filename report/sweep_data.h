// What a report is made from: a sweep and its runs, each with its metric points. nmctl fills it over gRPC
// (GetSweep, ListRuns, GetRun) and nmserver's dashboard from its store, so both draw the same figures.
#ifndef NMSPARSE_REPORT_SWEEP_DATA_H_
#define NMSPARSE_REPORT_SWEEP_DATA_H_

#include <vector>

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

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_SWEEP_DATA_H_
