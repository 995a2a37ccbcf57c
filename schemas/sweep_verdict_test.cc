// A property of sweep expansion: for random grids of valid and invalid experiments, ExpandSweep refuses the
// sweep exactly when one of its runs, written out as a spec of its own and validated alone, is refused, and
// its error is that run's own error behind "run K (labels): ". Issue 25: a validation memo keyed on a
// hand-kept list of what validation reads let one run reuse another's "valid".
#include <random>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "schemas/sweep.h"

namespace nmsparse {
namespace {

// Key paths with values, valid and invalid, that validation reads alone or with other keys.
const std::vector<std::pair<std::string, std::vector<std::string>>>& KeyValues() {
  static const auto* keys = new std::vector<std::pair<std::string, std::vector<std::string>>>{
      {"model.name", {"vit_nano_patch7_28", "vit_micro_patch4_28", "swinv2_micro_window7_28"}},
      {"model.img_size", {"0", "30", "56"}},
      {"data.dataset", {"synthetic", "fashion_mnist"}},
      {"data.batch_size", {"8", "32", "64", "100", "33"}},
      {"data.train_subset", {"0", "50", "500"}},
      {"data.synthetic_size", {"16", "256", "1024"}},
      {"optimizer.grad_accum_steps", {"1", "2", "8"}},
      {"resources.gpus", {"1", "2", "3"}},
      {"schedule.epochs", {"1", "2", "8"}},
      {"schedule.warmup_epochs", {"0", "1.5"}},
      {"sparsity.sparsity_type", {"DENSE", "STRUCTURED_NM", "SRSTE", "UNSTRUCTURED"}},
      {"sparsity.n_sparsity", {"1", "2"}},
      {"sparsity.m_sparsity", {"4", "8", "3", "1024"}},
      {"sparsity.sparsity_loc", {"FF", "FFQKV", "FF,O"}},
      {"sparsity.structure_decay_flag", {"false", "true"}},
      {"sparsity.structure_decay_type", {"SPARSIFY", "FINE", "DENSIFY"}},
      {"sparsity.phases", {"[]", "[{sparse: 0.5}, {fine_tune: 0.5}]"}},
      {"sparsity.dynamic",
       {"[]", "[{algorithm: rigl, sparsity: 0.9}]",
        "[{algorithm: gmp, sparsity: 0.5, param_filter: 'no.*'}]"}},
      {"semi_structured.layers", {"[]", "[blocks.*.mlp.fc1]", "[blocks.*.nope]"}},
      {"semi_structured.dense_after", {"{fraction: 0.5}", "{phase: 1}", "{phase: 3}"}},
      {"semi_structured.mask", {"exact", "transposable"}},
      {"seed", {"0", "1"}},
  };
  return *keys;
}

using Overrides = std::vector<std::pair<std::string, std::string>>;

struct Axis {
  std::string key;
  std::vector<std::string> values;
};

// Messages without their "line L: " parts: a base key's line is where the sweep file has it, not where a
// run's own spec would.
std::string WithoutLines(const std::string& message) {
  static const std::regex kLine("line [0-9]+: ");
  return std::regex_replace(message, kLine, "");
}

// The verdict on one run written out alone: its base with its overrides, parsed and validated.
absl::Status AloneVerdict(const YAML::Node& base, const Overrides& overrides) {
  YAML::Node spec = YAML::Clone(base);
  for (const auto& [key, value] : overrides) {
    if (absl::Status st = ApplyOverride(spec, key, value); !st.ok()) return st;
  }
  absl::StatusOr<ExperimentConfig> config = ParseExperimentNode(spec, "");
  if (!config.ok()) return config.status();
  return ValidateExperiment(*config);
}

// The grid's points in expansion order (first axis slowest).
std::vector<Overrides> GridPoints(const std::vector<Axis>& axes) {
  std::vector<Overrides> points(1);
  for (const Axis& axis : axes) {
    std::vector<Overrides> next;
    for (const Overrides& p : points) {
      for (const std::string& v : axis.values) {
        next.push_back(p);
        next.back().emplace_back(axis.key, v);
      }
    }
    points = std::move(next);
  }
  return points;
}

class SweepVerdictTest : public testing::Test {
 protected:
  std::mt19937 rng_{25};

  size_t Below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  // A few random keys set to random values.
  Overrides RandomOverrides(int max_keys) {
    Overrides out;
    for (int i = static_cast<int>(Below(max_keys + 1)); i > 0; --i) {
      const auto& [key, values] = KeyValues()[Below(KeyValues().size())];
      out.emplace_back(key, values[Below(values.size())]);
    }
    return out;
  }

  // One to three axes over distinct keys, each of two or three distinct values.
  std::vector<Axis> RandomAxes() {
    std::vector<Axis> axes;
    for (int i = 1 + static_cast<int>(Below(3)); i > 0; --i) {
      const auto& [key, values] = KeyValues()[Below(KeyValues().size())];
      bool taken = false;
      for (const Axis& a : axes) taken = taken || a.key == key;
      if (taken) continue;
      std::vector<std::string> shuffled = values;
      std::shuffle(shuffled.begin(), shuffled.end(), rng_);
      shuffled.resize(std::min<size_t>(shuffled.size(), 2 + Below(2)));
      axes.push_back({key, shuffled});
    }
    return axes;
  }
};

TEST_F(SweepVerdictTest, SweepVerdictIsEachRunsOwnVerdict) {
  int checked = 0, refused = 0;
  for (int sweep_index = 0; sweep_index < 600; ++sweep_index) {
    YAML::Node base = YAML::Load(
        "{model: {name: vit_nano_patch7_28}, data: {dataset: synthetic, batch_size: 32},"
        " sparsity: {sparsity_type: SRSTE, sparsity_loc: FF}}");
    for (const auto& [key, value] : RandomOverrides(3)) ASSERT_TRUE(ApplyOverride(base, key, value).ok());
    const std::vector<Axis> axes = RandomAxes();
    YAML::Node file(YAML::NodeType::Map);
    file["base"] = base;
    for (const Axis& axis : axes) {
      for (const std::string& v : axis.values) file["grid"][axis.key].push_back(v);
    }
    const std::string text = YAML::Dump(file);
    absl::StatusOr<v1::SweepSpec> sweep = ParseSweepYaml(text, "");
    if (!sweep.ok()) continue;  // The base alone is refused: no run to compare.
    ++checked;
    const absl::StatusOr<std::vector<ResolvedRun>> runs = ExpandSweep(*sweep);

    std::string expected;  // The first run refused alone, as ExpandSweep names it.
    const std::vector<Overrides> points = GridPoints(axes);
    for (size_t i = 0; i < points.size() && expected.empty(); ++i) {
      const absl::Status alone = AloneVerdict(base, points[i]);
      if (!alone.ok()) {
        expected = absl::StrCat("run ", i, " (", LabelsToString(points[i]), "): ", alone.message());
      }
    }
    refused += !expected.empty();
    if (expected.empty()) {
      ASSERT_TRUE(runs.ok()) << text << runs.status();
      EXPECT_EQ(runs->size(), points.size()) << text;
    } else {
      ASSERT_FALSE(runs.ok()) << text << "expected: " << expected;
      EXPECT_EQ(WithoutLines(std::string(runs.status().message())), WithoutLines(expected)) << text;
    }
  }
  // Enough sweeps of both kinds for the property to mean something.
  EXPECT_GE(checked, 300);
  EXPECT_GE(refused, 100);
  EXPECT_GE(checked - refused, 50);
}

}  // namespace
}  // namespace nmsparse
