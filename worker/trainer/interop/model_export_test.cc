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

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "contract/metric_names.h"
#include "nlohmann/json.hpp"
#include "schemas/model_catalog.h"
#include "schemas/model_resolution.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/distributed/distributed.h"
#include "worker/trainer/evaluator.h"
#include "worker/trainer/interop/initial_weights.h"
#include "worker/trainer/interop/safetensors.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/run_parts.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_error.h"
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
  // Stopped before its end: no final line, and the card says so.
  EXPECT_NE(text.str().find("- top-1: not known (no final metrics in "), std::string::npos) << text.str();
}

// The number the model card gives after `label` ("- top-1: " for the first, "), " for the second).
double CardNumber(const std::string& card, const std::string& label) {
  const size_t at = card.find(label);
  EXPECT_NE(at, std::string::npos) << card;
  return at == std::string::npos ? -1.0 : std::stod(card.substr(at + label.size()));
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

// The deployable top-1 through the real trainer, for a recipe whose trained weights are not N:M yet: MDGF 1:8
// with D(j) = exp(-0.01 j), still ~0.92 at the last of 8 steps. The final line's deploy_top1 is the top-1 of
// the model `nmtrain --export` writes, evaluated here by a fresh model that loads the export (no sparsity
// engine, so the masks are the file's zeros); its top1 is the leaking model's, which the same evaluation of
// the checkpoint under the recipe's rule at that step gives. Both evaluations are deterministic on one
// thread, so the counts are compared exactly.
TEST(ModelExportTest, TheFinalDeployableTop1IsTheExportedModelsTop1) {
  const ExperimentConfig config = ParseValidExperiment(
      std::string(kRunHead) +
      "sparsity: {sparsity_type: STRUCTURED_NM, decay_type: EXP, decay_coef: 0.01, n_sparsity: 1, "
      "m_sparsity: 8}\n");
  CapturedRun run("deploy_top1");
  ASSERT_EQ(RunTraining(config, run.options), kExitOk) << run.log.str();
  const auto epoch = LastMetricFields(run.metrics.str(), "epoch");
  EXPECT_GT(std::stod(epoch.at(contract::kDecayValue)), 0.9);  // The trained model leaks.
  const auto final_line = LastMetricFields(run.metrics.str(), "final");
  ASSERT_EQ(final_line.count(contract::kDeployTop1), 1u) << run.metrics.str();
  EXPECT_EQ(final_line.count(contract::kEmaDeployTop1), 0u);  // No model.ema.
  EXPECT_NE(run.log.str().find("deployable model"), std::string::npos) << run.log.str();

  ExportOptions options;
  options.checkpoint = CheckpointPath(run.options.out_dir);
  options.out_dir = run.options.out_dir + "/export";
  ExportModel(config, options);
  const ModelArch arch = *ResolveModel(config.model);
  auto exported = CreateModel(arch);
  std::ostringstream log;
  LoadInitialWeights(options.out_dir, arch, *exported, log);
  const RunData data = LoadData(config, arch);
  Distributed single(DistributedEnv{}, std::chrono::milliseconds(1000));
  const EvalResult deployed = Evaluate(*exported, *data.eval, data.norm, config.data.eval_batch_size, single);
  EXPECT_DOUBLE_EQ(std::stod(final_line.at(contract::kDeployTop1)), deployed.top1);
  // The model card names both top-1s of the run's final line (issue 39).
  std::ifstream card_file(options.out_dir + "/" + kExportCardFile);
  std::stringstream card;
  card << card_file.rdbuf();
  EXPECT_DOUBLE_EQ(CardNumber(card.str(), "- top-1: "), std::stod(final_line.at(contract::kDeployTop1)));
  EXPECT_NE(card.str().find("% deployable (deploy_top1: this model"), std::string::npos) << card.str();
  EXPECT_DOUBLE_EQ(CardNumber(card.str(), "N:M), "), std::stod(final_line.at(contract::kTop1)));
  EXPECT_NE(card.str().find("% raw (top1: the trained weights"), std::string::npos) << card.str();

  // The leaking model: the checkpoint under MDGF's rule at its last step, as the trainer's last evaluation.
  auto trained = CreateModel(arch);
  LoadModelFromCheckpoint(options.checkpoint, *trained);
  auto method = MakeSparsity(config, 2, 4, *trained, nullptr);
  method->BeginStep(1, 7);
  const EvalResult leaking = Evaluate(*trained, *data.eval, data.norm, config.data.eval_batch_size, single);
  EXPECT_DOUBLE_EQ(std::stod(final_line.at(contract::kTop1)), leaking.top1);
  // The two differ here, which lets this test tell the two models apart.
  EXPECT_NE(deployed.top1, leaking.top1);
}

// A dense run's deployable model is the one it trained: its deploy_top1 is its top1, with no second pass.
TEST(ModelExportTest, ADenseRunsDeployableTop1IsItsTop1) {
  CapturedRun run("deploy_top1_dense");
  ASSERT_EQ(RunTraining(ParseValidExperiment(kRunHead), run.options), kExitOk) << run.log.str();
  const auto final_line = LastMetricFields(run.metrics.str(), "final");
  ASSERT_EQ(final_line.count(contract::kDeployTop1), 1u) << run.metrics.str();
  EXPECT_EQ(final_line.at(contract::kDeployTop1), final_line.at(contract::kTop1));
}

// worker/trainer/interop/testdata/timm_export.txt (tools/timm_export_golden.py): what timm built from the
// committed export, each sparse block's count of exact N:M groups on the weights timm loaded, and timm's
// logits.
struct TimmExportGolden {
  std::string model_line;
  std::vector<std::string> nm_lines;
  std::vector<int64_t> input_shape;
  std::vector<std::vector<double>> logits;
};

std::vector<double> Numbers(const std::string& text) {
  std::vector<double> values;
  for (absl::string_view word : absl::StrSplit(text, absl::ByAnyChar(" ,"), absl::SkipEmpty())) {
    EXPECT_TRUE(absl::SimpleAtod(word, &values.emplace_back())) << text;
  }
  return values;
}

TimmExportGolden ReadTimmExportGolden(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  TimmExportGolden golden;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::pair<std::string, std::string> word = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    if (word.first == "model") {
      golden.model_line = word.second;
    } else if (word.first == "nm") {
      golden.nm_lines.push_back(word.second);
    } else if (word.first == "input") {
      for (double d : Numbers(word.second)) golden.input_shape.push_back(static_cast<int64_t>(d));
    } else {
      EXPECT_EQ(word.first, "logits") << line;
      golden.logits.push_back(Numbers(word.second));
    }
  }
  return golden;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr char kTimmExportDir[] = "worker/trainer/interop/testdata/timm_export";

// The round trip into timm. testdata/timm_export/ is what `nmtrain --export` wrote for a run nmtrain trained
// (testdata/timm_export_run.yaml: SR-STE 2:4 on FF and QKV, 3 steps); timm 1.0.31 loaded it as
// docs/interop.md says (create_model with pretrained_cfg_overlay's file, strict), found every block
// sparsity.json lists exactly N:M, and computed the logits in timm_export.txt (check_timm_goldens regenerates
// it in CI). Here nmtrain's forward of those weights -- the run's deployable model, which the export holds
// bit for bit (the tests above)
// -- gives the same logits. Tolerance as models_test's TimmSavedWeightsGiveTimmsLogits: the same float32
// function with other summation orders, at most K*u*sum|a_i*b_i| per dot product (K <= 128, u = 2^-24) over
// about a dozen chained stages with LayerNorms between them: 12 * 128 * 6e-8 ~ 1e-4 of the logits' scale.
// The fixture must stay what today's nmtrain writes: the same spec trained now exports the same config.json
// and the same tensor names, shapes and dtypes.
TEST(ModelExportTest, ATrainedRunsExportGivesNmtrainsLogitsInTimm) {
  const TimmExportGolden golden = ReadTimmExportGolden("worker/trainer/interop/testdata/timm_export.txt");
  const ExperimentConfig config =
      ParseValidExperiment(ReadText("worker/trainer/interop/testdata/timm_export_run.yaml"));
  const ModelArch arch = *ResolveModel(config.model);
  const json sparsity = ReadJson(std::string(kTimmExportDir) + "/" + kExportSparsityFile);
  // timm found every listed block exactly N:M: one line per block, all groups counted.
  ASSERT_EQ(golden.nm_lines.size(), sparsity["layers"].size());
  for (const std::string& line : golden.nm_lines) {
    const std::vector<std::string> words = absl::StrSplit(line, ' ');
    ASSERT_EQ(words.size(), 5u) << line;
    const std::pair<std::string, std::string> counts = absl::StrSplit(words[4], '/');
    EXPECT_EQ(counts.first, counts.second) << line;
  }

  auto model = CreateModel(arch);
  std::ostringstream log;
  LoadInitialWeights(kTimmExportDir, arch, *model, log);
  EXPECT_EQ(log.str(), "");
  model->eval();
  const torch::Tensor logits = [&] {
    torch::NoGradGuard no_grad;
    int64_t n = 1;
    for (int64_t d : golden.input_shape) n *= d;
    const torch::Tensor images =
        torch::sin(0.11 * torch::arange(n, torch::kFloat64)).view(golden.input_shape).to(torch::kFloat32);
    return model->forward(images).to(torch::kFloat64);
  }();
  ASSERT_EQ(logits.size(0), static_cast<int64_t>(golden.logits.size()));
  const double scale = 1.0 + logits.abs().max().item<double>();
  for (size_t b = 0; b < golden.logits.size(); ++b) {
    ASSERT_EQ(logits.size(1), static_cast<int64_t>(golden.logits[b].size()));
    for (size_t j = 0; j < golden.logits[b].size(); ++j) {
      EXPECT_NEAR(logits[b][j].item<double>(), golden.logits[b][j], 1e-4 * scale)
          << "image " << b << " class " << j;
    }
  }

  CapturedRun run("export_fixture");
  ASSERT_EQ(RunTraining(config, run.options), kExitOk) << run.log.str();
  ExportOptions options;
  options.checkpoint = CheckpointPath(run.options.out_dir);
  options.out_dir = run.options.out_dir + "/export";
  ExportModel(config, options);
  EXPECT_EQ(ReadText(options.out_dir + "/" + kExportConfigFile),
            ReadText(std::string(kTimmExportDir) + "/" + kExportConfigFile));
  const auto fresh = ReadWeights(options.out_dir);
  const auto committed = ReadWeights(kTimmExportDir);
  ASSERT_EQ(fresh.size(), committed.size());
  for (const auto& [name, tensor] : committed) {
    ASSERT_EQ(fresh.count(name), 1u) << name;
    EXPECT_EQ(fresh.at(name).sizes(), tensor.sizes()) << name;
    EXPECT_EQ(fresh.at(name).scalar_type(), tensor.scalar_type()) << name;
  }
  EXPECT_EQ(ReadJson(options.out_dir + "/" + kExportSparsityFile)["layers"].size(),
            sparsity["layers"].size());
}

}  // namespace
}  // namespace nmsparse
