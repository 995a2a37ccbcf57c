// Many runs' learning curves as few lines (issue 29), and repeats over seeds as one band (issue 40): up to
// kMaxRunCurves runs each keep their own line; past that, a figure draws one mean ± sample-std line per
// recipe x N:M group (its legend names the group and its run count) and highlights the kTopRunCurves runs
// whose last value is best by the metric's declared direction, so that a sweep of 10k runs is a readable
// figure, and a small file to draw.
#ifndef NMSPARSE_REPORT_CURVE_GROUPS_H_
#define NMSPARSE_REPORT_CURVE_GROUPS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "nmsparse/v1/sweep.pb.h"
#include "report/figure.h"

namespace nmsparse::report {

inline constexpr size_t kMaxRunCurves = 20;
inline constexpr size_t kTopRunCurves = 3;
// Points per group line at most: past it, every k-th x of the group is kept.
inline constexpr size_t kMaxGroupPoints = 200;

struct RunCurve {
  const v1::Run* run;
  Series series;  // kLines, named after the run.
};

// "SRSTE 2:4", "DENSE": the group a run's curve is averaged in.
std::string CurveGroupOf(const v1::Run& run);

// Appends `curves` to `figure`. When runs differ only in `replicate_axes` (seeds; replicates.h) and there are
// at most kMaxRunCurves configurations: one mean line with a ± sample-std band per configuration, coloured by
// recipe, each run's own line hidden behind it (Series::hidden). Else one line per run coloured by recipe, or
// past kMaxRunCurves runs the groups and the top runs (see above); `metric` is the curve's value (its
// direction ranks the top runs: none are highlighted for an undeclared one).
void AddRunCurves(std::vector<RunCurve> curves, const std::string& metric,
                  const std::vector<std::string>& replicate_axes, Figure* figure);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_CURVE_GROUPS_H_
