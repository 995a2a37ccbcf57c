// `nmctl compare --epoch best`: each run's metric at its best evaluated epoch instead of its last.
#ifndef NMSPARSE_REPORT_BEST_EPOCH_H_
#define NMSPARSE_REPORT_BEST_EPOCH_H_

#include <string>
#include <vector>

#include "report/sweep_data.h"

namespace nmsparse::report {

// The sweep's runs with each final metric of `metrics` that the run reports replaced by its best value
// (highest when `maximize`, else lowest) over the run's epoch points; a run without epoch points for a
// metric keeps its final value. Which runs count (those that trained to the end) is unchanged.
std::vector<v1::Run> AtBestEpoch(const SweepData& data, const std::vector<std::string>& metrics,
                                 bool maximize);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_BEST_EPOCH_H_
