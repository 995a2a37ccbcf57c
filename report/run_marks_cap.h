// Figures of one mark per run stay drawable at any sweep size. A browser draws a scatter of 50,000 runs as
// 50,000 SVG elements per figure (18 s for a 50,000-run sweep page); past `max_runs` runs, the figures keep
// the marks of one chosen set of at most max_runs runs, the same set in every figure (a run clicked in one is
// found in the others): the runs with the highest and the lowest final metric, and a seeded sample of the
// rest, fixed by run id. A figure that lost marks says so in its caption. Curves of groups, Pareto fronts and
// bars are kept whole; a line of more points than that (the best-so-far of the optimisation history) loses
// the inner points of its flat stretches only, which changes nothing drawn.
#ifndef NMSPARSE_REPORT_RUN_MARKS_CAP_H_
#define NMSPARSE_REPORT_RUN_MARKS_CAP_H_

#include <cstddef>
#include <string>
#include <vector>

#include "report/figure.h"
#include "report/sweep_data.h"

namespace nmsparse::report {

inline constexpr size_t kMaxRunMarks = 5000;

void CapRunMarks(const SweepData& data, const std::string& metric, size_t max_runs,
                 std::vector<Figure>& figures);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_RUN_MARKS_CAP_H_
