#include "report/sweep_data.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"

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

absl::Status ReadRunCurves(int64_t sweep_id, const CurvePageReader& read_page, SweepData* data) {
  v1::ListRunCurvesRequest request;
  request.set_sweep_id(sweep_id);
  while (true) {
    absl::StatusOr<v1::ListRunCurvesResponse> page = read_page(request);
    if (!page.ok()) {
      return absl::Status(page.status().code(),
                          absl::StrCat("runs of sweep ", sweep_id, " from run ", request.from_run() + 1, ": ",
                                       page.status().message()));
    }
    AddCurvePage(&*page, data);
    if (!page->more()) return absl::OkStatus();
    request.set_from_run(page->next_from_run());
    request.set_after_seq(page->next_after_seq());
  }
}

StoppedValues StoppedRunValues(const SweepData& data, const std::string& metric) {
  StoppedValues out;
  for (const RunData& r : data.runs) {
    if (r.run.state() != v1::STOPPED_EARLY) continue;
    if (auto at = LastEpochValue(r.curve, metric)) out[r.run.id()] = *at;
  }
  return out;
}

}  // namespace nmsparse::report
