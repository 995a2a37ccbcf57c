#include "report/replicates.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/metric_text.h"
#include "report/compare_pivot.h"

namespace nmsparse::report {

std::vector<std::string> ReplicateAxes(const v1::SweepSpec& spec) {
  std::vector<std::string> out;
  for (const v1::GridAxis& axis : spec.grid()) {
    if (IsReplicateAxis(axis)) out.push_back(axis.name());
  }
  for (const v1::RandomAxis& axis : spec.random()) {
    if (axis.key() == "seed") out.push_back(axis.key());
  }
  return out;
}

std::string ConfigurationOf(const v1::Run& run, const std::vector<std::string>& replicate_axes) {
  std::string out;
  for (const auto& [axis, value] : OrderedLabels(run)) {
    if (std::find(replicate_axes.begin(), replicate_axes.end(), axis) != replicate_axes.end()) continue;
    absl::StrAppend(&out, out.empty() ? "" : " ", axis, "=", FormatLabelValue(value));
  }
  return out;
}

std::vector<Configuration> GroupByConfiguration(const std::vector<const v1::Run*>& runs,
                                                const std::vector<std::string>& replicate_axes) {
  std::vector<Configuration> out;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string name = ConfigurationOf(*runs[i], replicate_axes);
    if (replicate_axes.empty()) {
      out.push_back({name, {i}});  // Without a replicate axis no two runs are repeats, whatever their labels.
      continue;
    }
    auto [it, added] = index.emplace(name, out.size());
    if (added) out.push_back({name, {}});
    out[it->second].members.push_back(i);
  }
  return out;
}

bool HasReplicates(const std::vector<Configuration>& configurations) {
  return std::any_of(configurations.begin(), configurations.end(),
                     [](const Configuration& c) { return c.members.size() > 1; });
}

}  // namespace nmsparse::report
