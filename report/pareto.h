// The Pareto front of (cost, quality) points: the points no other point beats on both (less or equal cost and
// higher or equal quality, better on one).
#ifndef NMSPARSE_REPORT_PARETO_H_
#define NMSPARSE_REPORT_PARETO_H_

#include <cstddef>
#include <vector>

namespace nmsparse::report {

struct CostQuality {
  double cost = 0.0;     // Lower is better (FLOPs).
  double quality = 0.0;  // Higher is better (top-1).
};

// Indices of the front's points in increasing cost. Of equal points the first is kept.
std::vector<size_t> ParetoFront(const std::vector<CostQuality>& points);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_PARETO_H_
