#include "server/sweeps/search_space.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/search/tpe_sampler.h"
#include "server/sweeps/sweep_submission.h"

namespace nmsparse::server {
namespace {

// Every combination of the axes' edges, or nothing when there are more than kMaxSpaceCorners.
std::vector<std::vector<std::string>> Corners(const std::vector<std::vector<std::string>>& edges) {
  int64_t count = 1;
  for (const auto& e : edges) {
    count *= static_cast<int64_t>(e.size());
    if (count > kMaxSpaceCorners) return {};
  }
  std::vector<std::vector<std::string>> out = {{}};
  for (const auto& e : edges) {
    std::vector<std::vector<std::string>> next;
    for (const auto& prefix : out) {
      for (const std::string& v : e) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    }
    out = std::move(next);
  }
  return out;
}

// Each axis' edges with the other axes at their middle.
std::vector<std::vector<std::string>> AxisEdges(const v1::SweepSpec& spec,
                                                const std::vector<std::vector<std::string>>& edges) {
  std::vector<std::string> middle;
  for (const v1::RandomAxis& axis : spec.random()) middle.push_back(MiddleValue(axis));
  std::vector<std::vector<std::string>> out;
  for (size_t a = 0; a < edges.size(); ++a) {
    for (const std::string& v : edges[a]) {
      out.push_back(middle);
      out.back()[a] = v;
    }
  }
  return out;
}

std::string PointText(const v1::SweepSpec& spec, const std::vector<std::string>& values) {
  std::vector<std::string> parts;
  for (int a = 0; a < spec.random_size(); ++a)
    parts.push_back(absl::StrCat(spec.random(a).key(), "=", values[a]));
  return absl::StrJoin(parts, ", ");
}

}  // namespace

absl::StatusOr<NewRun> ExpandPoint(const SweepExpander& expand, const v1::SweepSpec& spec, uint32_t index,
                                   const std::vector<std::string>& values) {
  v1::SweepSpec one = spec;
  one.clear_random();
  one.clear_search();
  one.clear_num_samples();
  for (int a = 0; a < spec.random_size(); ++a) {
    v1::GridAxis* axis = one.add_grid();
    axis->set_name(spec.random(a).key());
    v1::AxisValue* value = axis->add_values();
    value->set_label(values[a]);
    (*value->mutable_set())[spec.random(a).key()] = values[a];
  }
  NM_ASSIGN_OR_RETURN(std::vector<NewRun> runs, expand(one));
  if (runs.size() != 1) return absl::InternalError("a point of a search space expanded to more than one run");
  NewRun run = std::move(runs.front());
  run.index = index;
  ApplySweepSettings(spec, &run);
  return run;
}

absl::Status CheckSearchSpace(const SweepExpander& expand, const v1::SweepSpec& spec) {
  std::vector<std::vector<std::string>> edges;
  for (const v1::RandomAxis& axis : spec.random()) edges.push_back(ExtremeValues(axis));
  std::vector<std::vector<std::string>> points = Corners(edges);
  if (points.empty()) points = AxisEdges(spec, edges);
  for (const std::vector<std::string>& point : points) {
    absl::StatusOr<NewRun> run = ExpandPoint(expand, spec, 0, point);
    if (run.ok()) continue;
    return absl::InvalidArgumentError(
        absl::StrCat("search: the random axes reach runs that are not valid (every point of a search's space "
                     "must be), at ",
                     PointText(spec, point), ": ", run.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace nmsparse::server
