#include "report/pareto.h"

#include <algorithm>
#include <cmath>

namespace nmsparse::report {

std::vector<size_t> ParetoFront(const std::vector<CostQuality>& points) {
  // A point without a finite cost and quality (a diverged run) is on no front.
  std::vector<size_t> order;
  for (size_t i = 0; i < points.size(); ++i) {
    if (std::isfinite(points[i].cost) && std::isfinite(points[i].quality)) order.push_back(i);
  }
  // By cost, then best quality first: a point is on the front when it beats the quality of every cheaper one.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (points[a].cost != points[b].cost) return points[a].cost < points[b].cost;
    return points[a].quality > points[b].quality;
  });
  std::vector<size_t> front;
  for (size_t i : order) {
    if (front.empty() || points[i].quality > points[front.back()].quality) front.push_back(i);
  }
  return front;
}

}  // namespace nmsparse::report
