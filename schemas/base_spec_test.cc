// BaseSpec::WithOverrides re-parses only the touched keys; it must give the config and the error that
// re-parsing the whole overridden spec gives.
#include "schemas/base_spec.h"

#include "gtest/gtest.h"
#include "schemas/sweep.h"

namespace nmsparse {
namespace {

constexpr char kBase[] = R"(model: {name: vit_nano_patch7_28}
data: {dataset: synthetic, batch_size: 32}
optimizer: {lr: 0.001}
resources: {gpus: 1, cpu_threads: 2}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
)";

// The whole spec: `base` with the overrides applied, parsed.
absl::StatusOr<ExperimentConfig> ParseWhole(const YAML::Node& base, const Overrides& overrides) {
  YAML::Node spec = YAML::Clone(base);
  for (const auto& [key, value] : overrides) {
    if (auto st = ApplyOverride(spec, key, value); !st.ok()) return st;
  }
  return ParseExperimentNode(spec, "");
}

void ExpectSameAsWhole(const std::string& base_text, const Overrides& overrides) {
  const YAML::Node node = YAML::Load(base_text);
  const auto fast = BaseSpec(node).WithOverrides(overrides);
  const auto whole = ParseWhole(node, overrides);
  ASSERT_EQ(fast.status(), whole.status());
  if (fast.ok()) {
    EXPECT_EQ(*fast, *whole);
    EXPECT_EQ(fast->seed, whole->seed);
    EXPECT_EQ(fast->resources.cpu_threads, whole->resources.cpu_threads);
  }
}

TEST(BaseSpecTest, OverridesEqualWholeReparse) {
  const std::vector<Overrides> cases = {
      {},
      {{"seed", "9"}},
      {{"name", "x"}, {"seed", "3"}},
      {{"optimizer.lr", ""}},                             // Null: back to the default, not the base's value.
      {{"resources.cpu_threads", "0"}},                   // The wire's "0: 1".
      {{"schedule.epochs", "3"}},                         // A section the base lacks.
      {{"sparsity.n_sparsity", "5"}},                     // Cross-field error in a re-parsed section.
      {{"data.batch_size", "0"}, {"optimizer.lr", "x"}},  // Two errors: the first in spec order wins.
      {{"optimizer.lr", "x"}, {"data.batch_size", "0"}},
      {{"seed", "x"}, {"name", "[1]"}},  // Keys the base lacks are appended in the order they are set.
      {{"name", "[1]"}, {"seed", "x"}},
      {{"sparsity.phases", "[{sparse: 0.5}]"}},
      {{"model.bogus", "1"}},
      {{"optimizer.lr", "[1"}},
  };
  for (const Overrides& overrides : cases) {
    SCOPED_TRACE(overrides.empty() ? "none" : overrides[0].first);
    ExpectSameAsWhole(kBase, overrides);
  }
}

TEST(BaseSpecTest, BrokenBasesAreReparsedWhole) {
  const std::string broken = "model: {name: vit_nano_patch7_28}\ndata: {batch_size: 0}\n";
  ExpectSameAsWhole(broken, {{"seed", "1"}});
  ExpectSameAsWhole(broken, {{"data.batch_size", "8"}});
  ExpectSameAsWhole(broken, {{"data.dataset", "synthetic"}, {"data.batch_size", "8"}});
}

ExperimentConfig MustParse(const std::string& text) {
  auto config = ParseExperimentYaml(text, "base.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ExperimentConfig();
}

// The wire form parses back to the same config, and leaves out what the parser derives: a QKV ratio that
// follows N:M (so that an axis moving N:M moves it), not one set apart.
TEST(BaseSpecTest, WireFormParsesBackAndLeavesDerivedKeysOut) {
  const ExperimentConfig follows = MustParse(kBase);
  const std::string wire = BaseSpecYaml(follows);
  EXPECT_EQ(MustParse(wire), follows) << wire;
  EXPECT_EQ(wire.find("_qkv"), std::string::npos) << wire;
  const ExperimentConfig apart = MustParse(
      "model: {name: vit_nano_patch7_28}\nsparsity: {sparsity_type: SRSTE, n_sparsity_qkv: 1, "
      "m_sparsity_qkv: 4}\n");
  EXPECT_NE(BaseSpecYaml(apart).find("n_sparsity_qkv: 1"), std::string::npos) << BaseSpecYaml(apart);
  // The canonical form writes the followed ratio out; the wire form of its parse does not.
  EXPECT_NE(CanonicalYaml(follows).find("m_sparsity_qkv: 4"), std::string::npos);
  EXPECT_EQ(BaseSpecYaml(MustParse(CanonicalYaml(follows))).find("_qkv"), std::string::npos);
}

// A semi_structured section that chooses no layer is no part of the canonical form, but the base keeps it.
TEST(BaseSpecTest, WireFormKeepsASemiStructuredSectionWithoutLayers) {
  const ExperimentConfig c = MustParse(std::string(kBase) + "semi_structured: {mask: transposable}\n");
  EXPECT_EQ(CanonicalYaml(c).find("semi_structured"), std::string::npos);
  EXPECT_NE(BaseSpecYaml(c).find("mask: transposable"), std::string::npos) << BaseSpecYaml(c);
  EXPECT_EQ(MustParse(BaseSpecYaml(c)), c);
}

}  // namespace
}  // namespace nmsparse
