// ExpandSweep: the runs of a sweep (grid points x random draws) resolved into validated configs with their
// canonical YAML and content hash. The base (YAML text) is parsed once and each run re-parses only the keys
// its overrides touch (schemas/base_spec.h); every run is validated in full.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/base_spec.h"
#include "schemas/content_hash.h"
#include "schemas/sweep.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

// Draws of the random axes, as documented in the header.
class RandomDraws {
 public:
  explicit RandomDraws(uint64_t seed) : rng_(seed) {}

  std::string Draw(const v1::RandomAxis& axis) {
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    if (axis.choices_size() > 0) {
      const int n = axis.choices_size();
      return axis.choices(std::min(n - 1, static_cast<int>(u * n)));
    }
    if (axis.integer()) {
      const double lo = std::ceil(axis.min()), hi = std::floor(axis.max());
      return absl::StrCat(static_cast<int64_t>(std::min(hi, lo + std::floor(u * (hi - lo + 1)))));
    }
    const double value =
        axis.log() ? std::exp(std::log(axis.min()) + u * (std::log(axis.max()) - std::log(axis.min())))
                   : axis.min() + u * (axis.max() - axis.min());
    // exp(log(x)) is not always x (0.001 came back 0.0010000000000000002): the bounds are kept exact.
    return yaml_util::FormatDouble(std::clamp(value, axis.min(), axis.max()));
  }

 private:
  std::mt19937_64 rng_;
};

std::vector<RunPoint> GridPoints(const v1::SweepSpec& sweep) {
  std::vector<RunPoint> points(1);
  for (const v1::GridAxis& axis : sweep.grid()) {
    std::vector<RunPoint> next;
    for (const RunPoint& p : points) {
      for (const v1::AxisValue& v : axis.values()) {
        RunPoint q = p;
        q.labels.emplace_back(axis.name(), v.label());
        // Protobuf maps have no order: apply a value's overrides sorted by key path.
        std::map<std::string, std::string> sorted(v.set().begin(), v.set().end());
        for (const auto& kv : sorted) q.set.push_back(kv);
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

}  // namespace

std::vector<RunPoint> SweepRunPoints(const v1::SweepSpec& sweep) {
  RandomDraws draws(sweep.seed());
  const int samples = sweep.random_size() == 0 ? 1 : std::max<int>(1, sweep.num_samples());
  std::vector<RunPoint> runs;
  for (const RunPoint& grid_point : GridPoints(sweep)) {
    for (int s = 0; s < samples; ++s) {
      RunPoint& point = runs.emplace_back(grid_point);
      for (const v1::RandomAxis& axis : sweep.random()) {
        const std::string value = draws.Draw(axis);
        point.labels.emplace_back(axis.key(), value);
        point.set.emplace_back(axis.key(), value);
      }
      if (sweep.gpus_per_run() > 0) {
        point.set.emplace_back("resources.gpus", absl::StrCat(sweep.gpus_per_run()));
      }
    }
  }
  return runs;
}

absl::Status RunError(int index, const std::vector<std::pair<std::string, std::string>>& labels,
                      const absl::Status& status) {
  const std::string named = labels.empty() ? "" : " (" + LabelsToString(labels) + ")";
  return absl::Status(status.code(), absl::StrCat("run ", index, named, ": ", status.message()));
}

absl::StatusOr<std::vector<ResolvedRun>> ExpandSweep(const v1::SweepSpec& sweep) {
  absl::StatusOr<YAML::Node> base_node = yaml_util::LoadYaml(sweep.base(), "base");
  if (!base_node.ok()) return base_node.status();
  if (!base_node->IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat("base: value ", yaml_util::Describe(*base_node), " is not a map of spec keys"));
  }
  const BaseSpec base(*base_node);
  std::vector<RunPoint> points = SweepRunPoints(sweep);
  std::vector<ResolvedRun> runs;
  runs.reserve(points.size());
  for (RunPoint& point : points) {
    ResolvedRun& run = runs.emplace_back();
    run.index = static_cast<int>(runs.size()) - 1;
    run.labels = std::move(point.labels);
    absl::StatusOr<ExperimentConfig> config = base.WithOverrides(point.set);
    if (!config.ok()) return RunError(run.index, run.labels, config.status());
    if (absl::Status valid = ValidateExperiment(*config); !valid.ok())
      return RunError(run.index, run.labels, valid);
    run.config = *std::move(config);
    run.canonical_yaml = CanonicalYaml(run.config);
    run.content_hash = Sha256Hex(run.canonical_yaml);
    if (HasReducedIdentity(run.config)) {  // A dense run: hashed without the N:M keys it ignores.
      run.legacy_content_hash = std::move(run.content_hash);
      run.content_hash = ContentHash(run.config);
      if (run.legacy_content_hash == run.content_hash) run.legacy_content_hash.clear();
    }
  }
  return runs;
}

std::string LabelsToString(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::vector<std::string> parts;
  for (const auto& [axis, label] : labels) parts.push_back(axis + "=" + label);
  return absl::StrJoin(parts, ", ");
}

}  // namespace nmsparse
