// --set overrides, shared by nmctl submit/validate and nmctl fork: the spec key table's paths and checks.
#include "schemas/spec_overrides.h"

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "schemas/proto_bridge.h"

namespace nmsparse {
namespace {

v1::ExperimentSpec Base() {
  auto config = ParseExperimentYaml(R"(model: {name: vit_nano_patch7_28}
data: {dataset: synthetic, batch_size: 32}
schedule: {epochs: 2}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
)",
                                    "base.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? ToProto(*config) : v1::ExperimentSpec();
}

TEST(SpecOverridesTest, AppliesKeyPathsInOrder) {
  v1::ExperimentSpec spec = Base();
  ASSERT_TRUE(ApplySetOverrides({"schedule.epochs=6", "optimizer.lr=0.01", "schedule.epochs=7"}, &spec).ok());
  EXPECT_EQ(spec.schedule().epochs(), 7u);
  EXPECT_DOUBLE_EQ(spec.optimizer().lr(), 0.01);
}

TEST(SpecOverridesTest, UnknownKeyAndBadValuesNameTheAssignment) {
  v1::ExperimentSpec spec = Base();
  absl::Status unknown = ApplySetOverrides({"schedule.epochz=3"}, &spec);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("--set schedule.epochz=3: "), std::string::npos) << unknown;
  EXPECT_NE(unknown.message().find("epochz"), std::string::npos) << unknown;
  for (const char* bad : {"schedule.epochs=0", "schedule.epochs=-1"}) {
    absl::Status s = ApplySetOverrides({bad}, &spec);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("must be >= 1"), std::string::npos) << s;
  }
  EXPECT_EQ(ApplySetOverrides({"noequals"}, &spec).message(), "--set noequals: expected key.path=value");
}

TEST(SpecOverridesTest, NewRatioCarriesOverToQkvUnlessSetThere) {
  v1::ExperimentSpec spec = Base();
  spec.mutable_sparsity()->set_n_sparsity_qkv(2);
  spec.mutable_sparsity()->set_m_sparsity_qkv(4);
  ASSERT_TRUE(ApplySetOverrides({"sparsity.m_sparsity=8"}, &spec).ok());
  EXPECT_EQ(spec.sparsity().m_sparsity_qkv(), 8u);
  ASSERT_TRUE(ApplySetOverrides({"sparsity.m_sparsity=16", "sparsity.m_sparsity_qkv=4"}, &spec).ok());
  EXPECT_EQ(spec.sparsity().m_sparsity(), 16u);
  EXPECT_EQ(spec.sparsity().m_sparsity_qkv(), 4u);
}

}  // namespace
}  // namespace nmsparse
