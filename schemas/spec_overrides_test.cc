// --set overrides, shared by nmctl submit/validate and nmctl fork: the spec key table's paths and checks.
#include "schemas/spec_overrides.h"

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"

namespace nmsparse {
namespace {

ExperimentConfig Base() {
  auto config = ParseExperimentYaml(R"(model: {name: vit_nano_patch7_28}
data: {dataset: synthetic, batch_size: 32}
schedule: {epochs: 2}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
)",
                                    "base.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ExperimentConfig();
}

TEST(SpecOverridesTest, AppliesKeyPathsInOrder) {
  auto spec = ApplySetOverrides({"schedule.epochs=6", "optimizer.lr=0.01", "schedule.epochs=7"}, Base());
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->schedule.epochs, 7);
  EXPECT_DOUBLE_EQ(spec->optimizer.lr, 0.01);
}

TEST(SpecOverridesTest, UnknownKeyAndBadValuesNameTheAssignment) {
  const ExperimentConfig spec = Base();
  absl::Status unknown = ApplySetOverrides({"schedule.epochz=3"}, spec).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("--set schedule.epochz=3: "), std::string::npos) << unknown;
  EXPECT_NE(unknown.message().find("epochz"), std::string::npos) << unknown;
  for (const char* bad : {"schedule.epochs=0", "schedule.epochs=-1"}) {
    absl::Status s = ApplySetOverrides({bad}, spec).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("must be >= 1"), std::string::npos) << s;
  }
  EXPECT_EQ(ApplySetOverrides({"noequals"}, spec).status().message(),
            "--set noequals: expected key.path=value");
}

// A parent run's spec is canonical: its QKV ratio is written out, and still follows a new N:M.
TEST(SpecOverridesTest, NewRatioCarriesOverToQkvUnlessSetThere) {
  auto canonical = ParseExperimentYaml(CanonicalYaml(Base()), "parent.yaml");
  ASSERT_TRUE(canonical.ok()) << canonical.status();
  auto spec = ApplySetOverrides({"sparsity.m_sparsity=8"}, *canonical);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->sparsity.nm_qkv.m, 8);
  spec = ApplySetOverrides({"sparsity.m_sparsity=16", "sparsity.m_sparsity_qkv=4"}, *spec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->sparsity.nm.m, 16);
  EXPECT_EQ(spec->sparsity.nm_qkv.m, 4);
  spec = ApplySetOverrides({"sparsity.m_sparsity=8"}, *spec);  // QKV set apart stays.
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->sparsity.nm_qkv.m, 4);
}

}  // namespace
}  // namespace nmsparse
