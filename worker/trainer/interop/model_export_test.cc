// nmtrain --export on short real runs: the safetensors holds timm's parameter names and shapes, every layer
// sparsity.json lists is exactly N:M along its grouped dimension (MDGF's decayed leak removed), kept weights
// are the checkpoint's own, and a dense run exports its weights unchanged.
#include "worker/trainer/interop/model_export.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"
#include "schemas/model_catalog.h"
#include "schemas/model_resolution.h"
#include "worker/trainer/checkpoint.h"
#include "worker/trainer/exit_codes.h"
#include "worker/trainer/interop/safetensors.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_testing.h"

namespace nmsparse {
namespace {

using nlohmann::json;

constexpr char kRunHead[] = R"(
seed: 5
model: {name: vit_nano_patch7_28}
data: {dataset: synthetic, synthetic_size: 64, batch_size: 16, eval_subset: 16}
schedule: {epochs: 2}
)";

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::map<std::string, torch::Tensor> ReadWeights(const std::string& dir) {
  absl::StatusOr<SafetensorsContents> read = ReadSafetensors(dir + "/" + kExportWeightsFile);
  EXPECT_TRUE(read.ok()) << read.status();
  std::map<std::string, torch::Tensor> out;
  if (read.ok()) {
    for (auto& [name, t] : read->tensors) out[name] = t;
  }
  return out;
}

// Trains `sparsity` for 3 steps and exports the checkpoint; returns the export directory.
std::string TrainAndExport(const std::string& name, const std::string& sparsity, ExperimentConfig* config) {
  *config = ParseValidExperiment(std::string(kRunHead) + sparsity);
  CapturedRun run(name);
  run.options.stop_after_steps = 3;
  EXPECT_EQ(RunTraining(*config, run.options), kExitTerminated) << run.log.str();
  ExportOptions options;
  options.checkpoint = CheckpointPath(run.options.out_dir);
  options.out_dir = run.options.out_dir + "/export";
  ExportModel(*config, options);
  return options.out_dir;
}

// The safetensors has exactly timm's parameters (the catalogue mirrors timm's names and shapes).
void ExpectTimmParameters(const ExperimentConfig& config,
                          const std::map<std::string, torch::Tensor>& weights) {
  const ModelArch arch = *ResolveModel(config.model);
  const std::vector<ParameterShape> expected = ModelParameters(arch);
  EXPECT_EQ(weights.size(), expected.size());
  for (const ParameterShape& p : expected) {
    auto it = weights.find(p.name);
    ASSERT_NE(it, weights.end()) << p.name;
    EXPECT_EQ(it->second.sizes().vec(), p.shape) << p.name;
  }
}

// Every group of M along in_features of every listed block holds exactly N nonzeros.
void ExpectExactlyNM(const json& sparsity, const std::map<std::string, torch::Tensor>& weights,
                     int expected_layers) {
  ASSERT_EQ(static_cast<int>(sparsity["layers"].size()), expected_layers) << sparsity.dump();
  for (const json& layer : sparsity["layers"]) {
    const std::string parameter = layer["parameter"];
    const int64_t begin = layer["rows"][0], end = layer["rows"][1];
    const int n = layer["n"], m = layer["m"];
    EXPECT_EQ(layer["grouped"], "in_features");
    const torch::Tensor block = weights.at(parameter).narrow(0, begin, end - begin);
    const torch::Tensor kept = block.ne(0).reshape({-1, m}).sum(1);
    EXPECT_TRUE(kept.eq(n).all().item<bool>()) << parameter << " rows " << begin << ".." << end;
    EXPECT_NEAR(layer["density"].get<double>(), static_cast<double>(n) / m, 1e-12) << parameter;
    EXPECT_TRUE(layer["two_four_along_in_features"].get<bool>()) << parameter;  // 2:4 and 1:8 both fit 2:4.
  }
}

TEST(ModelExportTest, SrsteTwoFourOnFfAndQkvIsExactlyTwoFourWithTimmNames) {
  ExperimentConfig config;
  const std::string dir = TrainAndExport(
      "export_srste", "sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FFQKV}\n",
      &config);
  const auto weights = ReadWeights(dir);
  ExpectTimmParameters(config, weights);
  // Per block: fc1, fc2 and Q, K, V of qkv, in 2 blocks.
  ExpectExactlyNM(ReadJson(dir + "/" + kExportSparsityFile), weights, 2 * 5);
  const json timm = ReadJson(dir + "/" + kExportConfigFile);
  EXPECT_EQ(timm["architecture"], "vit_tiny_patch16_224");
  EXPECT_EQ(timm["num_features"], 32);
  EXPECT_EQ(timm["global_pool"], "token");
  EXPECT_EQ(timm["model_args"]["embed_dim"], 32);
  EXPECT_EQ(timm["model_args"]["in_chans"], 1);
  EXPECT_EQ(timm["pretrained_cfg"]["input_size"], json::array({1, 28, 28}));
  std::ifstream card(dir + "/" + kExportCardFile);
  std::stringstream text;
  text << card.rdbuf();
  EXPECT_NE(text.str().find("```yaml\n"), std::string::npos);
  EXPECT_NE(text.str().find("SRSTE"), std::string::npos);
}

TEST(ModelExportTest, MdgfOneEightDropsTheDecayedLeakAndKeepsTheCheckpointsWeights) {
  ExperimentConfig config;
  // D(j) = exp(-0.01 j) is still about 0.97 at step 3: the trained model leaks almost all pruned weights.
  const std::string dir = TrainAndExport("export_mdgf",
                                         "sparsity: {sparsity_type: STRUCTURED_NM, decay_type: EXP, "
                                         "decay_coef: 0.01, n_sparsity: 1, m_sparsity: 8}\n",
                                         &config);
  const auto weights = ReadWeights(dir);
  ExpectTimmParameters(config, weights);
  ExpectExactlyNM(ReadJson(dir + "/" + kExportSparsityFile), weights, 2 * 2);
  // Kept weights are the checkpoint's own, unscaled.
  auto model = CreateModel(*ResolveModel(config.model));
  LoadModelFromCheckpoint(dir + "/../checkpoint.pt", *model);
  const torch::Tensor raw = model->named_parameters()["blocks.0.mlp.fc1.weight"];
  const torch::Tensor exported = weights.at("blocks.0.mlp.fc1.weight");
  EXPECT_TRUE(torch::equal(exported, raw * exported.ne(0)));
}

TEST(ModelExportTest, ADenseRunExportsItsWeightsUnchangedAndBf16Rounds) {
  ExperimentConfig config;
  const std::string dir = TrainAndExport("export_dense", "", &config);
  const auto weights = ReadWeights(dir);
  ExpectTimmParameters(config, weights);
  EXPECT_TRUE(ReadJson(dir + "/" + kExportSparsityFile)["layers"].empty());
  auto model = CreateModel(*ResolveModel(config.model));
  LoadModelFromCheckpoint(dir + "/../checkpoint.pt", *model);
  for (const auto& item : model->named_parameters()) {
    EXPECT_TRUE(torch::equal(weights.at(item.key()), item.value())) << item.key();
  }
  ExportOptions bf16;
  bf16.checkpoint = dir + "/../checkpoint.pt";
  bf16.out_dir = dir + "_bf16";
  bf16.bf16 = true;
  ExportModel(config, bf16);
  const auto rounded = ReadWeights(bf16.out_dir);
  EXPECT_EQ(rounded.at("head.weight").scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(rounded.at("head.weight"), weights.at("head.weight").to(torch::kBFloat16)));
}

TEST(ModelExportTest, EmaWeightsOfARunWithoutEmaAreRefused) {
  ExperimentConfig config;
  const std::string dir = TrainAndExport("export_no_ema", "", &config);
  ExportOptions options;
  options.checkpoint = dir + "/../checkpoint.pt";
  options.out_dir = dir + "_ema";
  options.ema = true;
  try {
    ExportModel(config, options);
    FAIL() << "expected a usage error";
  } catch (const TrainerError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("holds no model EMA"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nmsparse
