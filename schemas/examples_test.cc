// Every example under schemas/examples parses and validates, and the sweeps expand to their documented run
// counts. (spec_keys_test checks that the JSON Schemas name every key.)
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "schemas/layer_plan.h"
#include "schemas/recipe.h"
#include "schemas/sweep.h"

namespace nmsparse {
namespace {

const std::string kDir = "schemas/examples/";

TEST(ExamplesTest, SingleExperimentsValidate) {
  for (const char* file : {"micro_vit_srste.yaml", "reference_vit_base_training.yaml"}) {
    std::vector<std::string> warnings;
    auto config = LoadExperimentFile(kDir + file, &warnings);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_TRUE(ValidateExperiment(*config).ok()) << file << ": " << ValidateExperiment(*config);
    auto plan = DescribeLayerPlan(*config);
    ASSERT_TRUE(plan.ok());
    EXPECT_FALSE(plan->empty()) << file;
  }
  auto micro = LoadExperimentFile(kDir + "micro_vit_srste.yaml");
  EXPECT_EQ(micro->sparsity.sparsity_type, SparsityType::kSrste);
  EXPECT_EQ(micro->model.name, "vit_micro_patch4_28");
  // The commented copy of the reference config reads exactly as the verbatim fixture.
  auto fixture = LoadExperimentFile("schemas/testdata/reference_vit_base_training.yaml");
  auto example = LoadExperimentFile(kDir + "reference_vit_base_training.yaml");
  ASSERT_TRUE(fixture.ok() && example.ok());
  EXPECT_EQ(CanonicalYaml(*fixture), CanonicalYaml(*example));
}

// Every file of examples/, whatever its name: sweeps (a base or base_file key) expand, experiments validate.
TEST(ExamplesTest, EveryExampleFileLoads) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    const YAML::Node top = YAML::LoadFile(path);
    if (top["base"] || top["base_file"]) {
      auto sweep = ParseSweepFile(path);
      ASSERT_TRUE(sweep.ok()) << sweep.status();
      auto runs = ExpandSweep(*sweep);
      EXPECT_TRUE(runs.ok()) << path << ": " << runs.status();
    } else {
      auto config = LoadExperimentFile(path);
      ASSERT_TRUE(config.ok()) << config.status();
      EXPECT_TRUE(ValidateExperiment(*config).ok()) << path << ": " << ValidateExperiment(*config);
    }
  }
  EXPECT_GE(files, 4);
}

TEST(ExamplesTest, QuickSweepExpandsToFourRecipes) {
  auto sweep = ParseSweepFile(kDir + "quick_fmnist_sweep.yaml");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  auto runs = ExpandSweep(*sweep);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 4u);
  std::vector<std::string> labels;
  for (const auto& r : *runs) labels.push_back(r.labels[0].second);
  EXPECT_EQ(labels, (std::vector<std::string>{"dense", "srste_2_4", "srste_1_8", "mdgf_exp_1_8"}));
  const ExperimentConfig& mdgf = (*runs)[3].config;
  EXPECT_EQ(mdgf.sparsity.decay_type, DecayType::kExp);
  EXPECT_EQ(mdgf.sparsity.nm, (NM{1, 8}));
  EXPECT_EQ(mdgf.sparsity.nm_qkv, (NM{1, 8}));
  EXPECT_EQ(mdgf.sparsity.locations.size(), 4u);
  EXPECT_EQ(mdgf.data.train_subset, 30000);
  EXPECT_DOUBLE_EQ(mdgf.sparsity.decay_coef, 0.007);
}

TEST(ExamplesTest, PaperTableSweepExpandsTo25Runs) {
  auto sweep = ParseSweepFile(kDir + "vit_b_paper_table_sweep.yaml");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  auto runs = ExpandSweep(*sweep);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 25u);
  std::set<std::string> hashes;
  for (const auto& r : *runs) hashes.insert(r.content_hash);
  EXPECT_EQ(hashes.size(), 25u);
  const ResolvedRun& last = runs->back();
  EXPECT_EQ(LabelsToString(last.labels), "recipe=sdgf_geometric, nm=1:32");
  EXPECT_TRUE(last.config.sparsity.structure_decay_flag);
  EXPECT_EQ(last.config.sparsity.structure_decay_type, StructureDecayType::kFine);
  EXPECT_EQ(last.config.sparsity.nm, (NM{1, 32}));
  EXPECT_EQ(last.config.resources.gpus, 8);
  EXPECT_EQ(last.config.resources.precision, "bf16");
}

// The recipes example of docs/sweeps.md: each named recipe is the run its explicit keys make.
TEST(ExamplesTest, RecipesSweepExpandsEachRecipe) {
  auto sweep = ParseSweepFile(kDir + "recipes_sweep.yaml");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  auto runs = ExpandSweep(*sweep);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 7u);
  const SparsityConfig& ste = (*runs)[1].config.sparsity;
  EXPECT_EQ(ste.sparsity_type, SparsityType::kStructuredNM);
  EXPECT_EQ(ste.decay_type, DecayType::kStep);
  EXPECT_EQ((*runs)[2].config.sparsity.sparsity_type, SparsityType::kSrste);
  EXPECT_EQ((*runs)[3].config.sparsity.decay_type, DecayType::kExp);
  EXPECT_EQ((*runs)[4].config.sparsity.decay_type, DecayType::kLinear);
  const SparsityConfig& geometric = (*runs)[6].config.sparsity;
  EXPECT_TRUE(geometric.structure_decay_flag);
  EXPECT_EQ(geometric.structure_decay_type, StructureDecayType::kFine);
  EXPECT_EQ(geometric.nm, (NM{1, 8}));
}

// The recipes side by side (issue 42; docs/sweeps.md): every recipe at an N:M it supports on one model, the
// paper's at 2:4 and 1:8, the 2024 ones at 2:4, each row the run its recipe names.
TEST(ExamplesTest, Recipes2024SweepPutsEveryRecipeSideBySide) {
  auto sweep = ParseSweepFile(kDir + "recipes_2024_sweep.yaml");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  auto runs = ExpandSweep(*sweep);
  ASSERT_TRUE(runs.ok()) << runs.status();
  const std::vector<std::tuple<std::string, std::string, NM>> expected = {
      {"dense", "DENSE", NM{0, 0}},     {"ste_2_4", "STE", NM{2, 4}},   {"srste_2_4", "SRSTE", NM{2, 4}},
      {"mdgf_2_4", "MDGF", NM{2, 4}},   {"sdgf_2_4", "SDGF", NM{2, 4}}, {"ste_1_8", "STE", NM{1, 8}},
      {"srste_1_8", "SRSTE", NM{1, 8}}, {"mdgf_1_8", "MDGF", NM{1, 8}}, {"sdgf_1_8", "SDGF", NM{1, 8}},
      {"sste", "SSTE", NM{2, 4}},       {"step", "STEP", NM{2, 4}},     {"hu24", "HU24", NM{2, 4}},
      {"bimask", "BIMASK", NM{2, 4}},   {"srigl", "SRIGL", NM{0, 0}}};
  ASSERT_EQ(runs->size(), expected.size());
  std::set<std::string> models;
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& [label, recipe, nm] = expected[i];
    const ResolvedRun& run = (*runs)[i];
    SCOPED_TRACE(label);
    EXPECT_EQ(run.labels[0].second, label);
    EXPECT_EQ(RecipeOf(run.config.sparsity), recipe);
    if (recipe == "SRIGL") {
      ASSERT_EQ(run.config.sparsity.dynamic.size(), 1u);  // A density, not an N:M.
      EXPECT_EQ(run.config.sparsity.dynamic[0].algorithm, DynamicAlgorithm::kSrigl);
    } else if (recipe != "DENSE") {
      EXPECT_EQ(run.config.sparsity.nm, nm);
    }
    EXPECT_TRUE(ValidateExperiment(run.config).ok()) << ValidateExperiment(run.config);
    models.insert(run.config.model.name);
  }
  EXPECT_EQ(models, std::set<std::string>{"vit_micro_patch4_28"});
}

// The ASHA example of docs/sweeps.md trains what its text says: SR-STE 1:4 and 1:8 (issue 27: it trained 2:4
// and 2:8), and ranks by top-1 upwards without saying `mode`.
TEST(ExamplesTest, DocsAshaExampleTrainsOneOfFourAndOneOfEight) {
  std::ifstream in("docs/sweeps.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t start = doc.find("name: lr-nm-asha\n");
  ASSERT_NE(start, std::string::npos);
  const std::string yaml = doc.substr(start, doc.find("```", start) - start);
  auto sweep = ParseSweepYaml(yaml, "docs/sweeps.md");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->early_stopping().mode(), "max");
  auto runs = ExpandSweep(*sweep);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 8u);
  std::set<std::pair<int, int>> nm;
  for (const auto& run : *runs) nm.insert({run.config.sparsity.nm.n, run.config.sparsity.nm.m});
  EXPECT_EQ(nm, (std::set<std::pair<int, int>>{{1, 4}, {1, 8}}));
}

}  // namespace
}  // namespace nmsparse
