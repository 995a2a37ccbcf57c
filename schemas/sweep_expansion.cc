// ExpandSweep: the runs of a sweep (grid points x random draws) resolved into validated configs with their
// canonical YAML, content hash and wire spec. The base is parsed once and each run re-parses only the keys
// its overrides touch (schemas/base_spec.h); every run is validated in full.
// ExpandSweepGeneric resolves each run the generic way, the reference for tests and the benchmark.
#include <cmath>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/base_spec.h"
#include "schemas/content_hash.h"
#include "schemas/proto_bridge.h"
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
    return yaml_util::FormatDouble(value);
  }

 private:
  std::mt19937_64 rng_;
};

// One run's overrides: key path -> value text, with their labels.
struct Point {
  std::vector<std::pair<std::string, std::string>> labels;
  Overrides set;
};

std::vector<Point> GridPoints(const v1::SweepSpec& sweep) {
  std::vector<Point> points(1);
  for (const v1::GridAxis& axis : sweep.grid()) {
    std::vector<Point> next;
    for (const Point& p : points) {
      for (const v1::AxisValue& v : axis.values()) {
        Point q = p;
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

bool Sets(const Point& p, const std::string& key) {
  for (const auto& kv : p.set) {
    if (kv.first == key) return true;
  }
  return false;
}

// QKV follows N:M when the base's QKV ratio is the defaulted one (see the header).
void CarryQkv(const v1::SweepSpec& sweep, Point* p) {
  const v1::SparsitySpec& s = sweep.base().sparsity();
  const std::vector<std::pair<std::string, std::string>> pairs = {{"n_sparsity", "n_sparsity_qkv"},
                                                                  {"m_sparsity", "m_sparsity_qkv"}};
  if (s.n_sparsity() != s.n_sparsity_qkv() || s.m_sparsity() != s.m_sparsity_qkv()) return;
  if (Sets(*p, "sparsity.n_sparsity_qkv") || Sets(*p, "sparsity.m_sparsity_qkv")) return;
  Overrides extra;
  for (const auto& [main, qkv] : pairs) {
    for (const auto& kv : p->set) {
      if (kv.first == "sparsity." + main) extra.emplace_back("sparsity." + qkv, kv.second);
    }
  }
  p->set.insert(p->set.end(), extra.begin(), extra.end());
}

// Every run's point in expansion order, with the QKV carry-over and gpus_per_run applied.
std::vector<Point> RunPoints(const v1::SweepSpec& sweep) {
  RandomDraws draws(sweep.seed());
  const int samples = sweep.random_size() == 0 ? 1 : std::max<int>(1, sweep.num_samples());
  std::vector<Point> runs;
  for (const Point& grid_point : GridPoints(sweep)) {
    for (int s = 0; s < samples; ++s) {
      Point& point = runs.emplace_back(grid_point);
      for (const v1::RandomAxis& axis : sweep.random()) {
        const std::string value = draws.Draw(axis);
        point.labels.emplace_back(axis.key(), value);
        point.set.emplace_back(axis.key(), value);
      }
      CarryQkv(sweep, &point);
      if (sweep.gpus_per_run() > 0) {
        point.set.emplace_back("resources.gpus", absl::StrCat(sweep.gpus_per_run()));
      }
    }
  }
  return runs;
}

// How runs are resolved: incrementally with memoized validation and direct writers, or the generic way
// (whole spec re-parsed and validated, yaml-cpp emitter, reflection).
class Resolver {
 public:
  Resolver(const v1::SweepSpec& sweep, bool generic)
      : base_(MessageToYaml(sweep.base())), generic_(generic) {}

  absl::StatusOr<ResolvedRun> Resolve(int index, Point point) {
    ResolvedRun run;
    run.index = index;
    run.labels = std::move(point.labels);
    auto config = generic_ ? base_.ParseWhole(point.set) : base_.WithOverrides(point.set);
    if (!config.ok()) return RunError(run, config.status());
    const absl::Status valid = ValidateExperiment(*config);
    if (!valid.ok()) return RunError(run, valid);
    run.config = std::move(*config);
    run.canonical_yaml = generic_ ? CanonicalYamlByEmitter(run.config) : CanonicalYaml(run.config);
    run.content_hash = Sha256Hex(run.canonical_yaml);
    run.spec = generic_ ? ToProtoViaYaml(run.config) : ToProto(run.config);
    return run;
  }

 private:
  // "run 3 (recipe=srste, sparsity.m_sparsity=8): " before the message.
  static absl::Status RunError(const ResolvedRun& run, const absl::Status& st) {
    const std::string labels = run.labels.empty() ? "" : " (" + LabelsToString(run.labels) + ")";
    return absl::Status(st.code(), absl::StrCat("run ", run.index, labels, ": ", st.message()));
  }

  const BaseSpec base_;
  const bool generic_;
};

absl::StatusOr<std::vector<ResolvedRun>> Expand(const v1::SweepSpec& sweep, bool generic) {
  Resolver resolver(sweep, generic);
  std::vector<Point> points = RunPoints(sweep);
  std::vector<ResolvedRun> runs;
  runs.reserve(points.size());
  for (Point& point : points) {
    auto run = resolver.Resolve(static_cast<int>(runs.size()), std::move(point));
    if (!run.ok()) return run.status();
    runs.push_back(std::move(*run));
  }
  return runs;
}

}  // namespace

std::string LabelsToString(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::vector<std::string> parts;
  for (const auto& [axis, label] : labels) parts.push_back(axis + "=" + label);
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<std::vector<ResolvedRun>> ExpandSweep(const v1::SweepSpec& sweep) {
  return Expand(sweep, false);
}

absl::StatusOr<std::vector<ResolvedRun>> ExpandSweepGeneric(const v1::SweepSpec& sweep) {
  return Expand(sweep, true);
}

}  // namespace nmsparse
