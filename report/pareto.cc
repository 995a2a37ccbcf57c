#include "report/pareto.h"

#include <algorithm>
#include <numeric>

namespace nmsparse::report {

std::vector<size_t> ParetoFront(const std::vector<CostQuality>& points) {
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
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
