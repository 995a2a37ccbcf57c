// nmctl validate's warnings about the deployable model: D at the last step of MDGF above 1e-3, and a
// fine-tune fraction that rounds to 0 epochs, each naming its key and value; none for runs that end
// hard-masked.
#include "cli/deploy_warnings.h"

#include <gtest/gtest.h>

#include <string>

#include "schemas/experiment_config.h"

namespace nmsparse::cli {
namespace {

// 500 synthetic images in batches of 50: 10 optimizer steps per epoch.
ExperimentConfig Spec(const std::string& sparsity, int epochs = 10) {
  auto config = ParseExperimentYaml(
      "model: {name: vit_nano_patch7_28}\n"
      "data: {dataset: synthetic, synthetic_size: 500, batch_size: 50}\n"
      "schedule: {epochs: " +
          std::to_string(epochs) + "}\nsparsity: " + sparsity + "\n",
      "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ExperimentConfig{};
}

bool Has(const std::vector<std::string>& warnings, const std::string& text) {
  for (const std::string& w : warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

// The case: MDGF-Exp with decay_coef 0.05 over 100 sparse steps ends at D = exp(-0.05 * 99) =
// 0.00708.
TEST(DeployWarningsTest, MdgfEndingAboveTheToleranceIsNamedWithItsD) {
  const auto warnings =
      DeployWarnings(Spec("{sparsity_type: STRUCTURED_NM, decay_type: EXP, decay_coef: 0.05, n_sparsity: 1, "
                          "m_sparsity: 8}"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(Has(warnings,
                  "sparsity.decay_coef: 0.05 (decay_type EXP) leaves D = 0.00708 at the last of "
                  "the 100 steps"))
      << warnings[0];
}

// exp(-0.1 * 99) = 5e-5: below the tolerance. A fine-tune phase ends hard-masked whatever D was. SR-STE and
// STEP decay are hard-masked throughout; dense runs deploy what they trained.
TEST(DeployWarningsTest, RunsEndingHardMaskedGetNone) {
  EXPECT_TRUE(
      DeployWarnings(Spec("{sparsity_type: STRUCTURED_NM, decay_type: EXP, decay_coef: 0.1}")).empty());
  EXPECT_TRUE(DeployWarnings(Spec("{sparsity_type: STRUCTURED_NM, decay_type: EXP, decay_coef: 0.001, "
                                  "fine_tune_steps: 0.2}"))
                  .empty());
  EXPECT_TRUE(DeployWarnings(Spec("{sparsity_type: SRSTE}")).empty());
  EXPECT_TRUE(DeployWarnings(Spec("{sparsity_type: STRUCTURED_NM}")).empty());
  EXPECT_TRUE(DeployWarnings(Spec("{sparsity_type: DENSE}")).empty());
}

// j counts from the first sparse step: with dense_steps 0.5, 50 sparse steps, exp(-0.1 * 49) = 0.00745.
TEST(DeployWarningsTest, TheSparseStepsStartAfterTheDensePhase) {
  EXPECT_TRUE(Has(DeployWarnings(Spec("{sparsity_type: STRUCTURED_NM, decay_type: EXP, decay_coef: 0.1, "
                                      "dense_steps: 0.5}")),
                  "D = 0.00745 at the last of the 50 steps"));
}

TEST(DeployWarningsTest, AFineTuneFractionRoundingToZeroEpochsIsNamed) {
  const auto warnings = DeployWarnings(Spec("{sparsity_type: SRSTE, fine_tune_steps: 0.05}"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(Has(warnings, "sparsity.fine_tune_steps: 0.05 of the 10 epochs")) << warnings[0];
  EXPECT_TRUE(Has(warnings, "fine_tune_steps >= 0.1 gives one")) << warnings[0];
  const auto phases =
      DeployWarnings(Spec("{sparsity_type: SRSTE, phases: [{sparse: 0.9}, {fine_tune: 0.05}, {sparse: 0.05}]}"));
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_TRUE(Has(phases, "sparsity.phases[1]: fine_tune fraction 0.05 of the 10 epochs")) << phases[0];
  EXPECT_TRUE(DeployWarnings(Spec("{sparsity_type: SRSTE, fine_tune_steps: 0.1}")).empty());
}

}  // namespace
}  // namespace nmsparse::cli
