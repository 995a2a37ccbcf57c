#include "report/sweep_data.h"

#include <iterator>
#include <utility>

namespace nmsparse::report {

void AddCurvePage(v1::ListRunCurvesResponse* page, SweepData* data) {
  for (v1::RunCurve& c : *page->mutable_runs()) {
    auto points = c.mutable_metrics();
    if (data->runs.empty() || data->runs.back().run.id() != c.run().id()) {
      data->runs.push_back({std::move(*c.mutable_run()), {}});
    }
    std::vector<v1::MetricPoint>& curve = data->runs.back().curve;
    curve.insert(curve.end(), std::make_move_iterator(points->begin()),
                 std::make_move_iterator(points->end()));
  }
}

}  // namespace nmsparse::report
