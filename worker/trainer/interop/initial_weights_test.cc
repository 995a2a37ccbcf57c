// model.initial_checkpoint: a model's weights written as safetensors (a file or a timm folder) give another
// model the same logits; a head of another size is dropped and logged; ViT's pos_embed is resampled to a new
// grid with the class token kept; every strictness error names the key and both shapes; a damaged file or an
// empty folder is refused by name.
#include "worker/trainer/interop/initial_weights.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <torch/torch.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "schemas/model_catalog.h"
#include "worker/trainer/checkpoint/checkpoint_digest.h"
#include "worker/trainer/interop/safetensors.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {
namespace {

ModelArch Nano(int img_size = 28, int num_classes = 10) {
  return *LookupModel("vit_nano_patch7_28", img_size, 0, num_classes);
}

NamedTensors Weights(torch::nn::Module& model) {
  NamedTensors out;
  for (const auto& item : model.named_parameters()) out.emplace_back(item.key(), item.value().detach());
  return out;
}

std::string Saved(const std::string& name, const NamedTensors& weights) {
  const std::string path = ::testing::TempDir() + "/" + name;
  EXPECT_TRUE(WriteSafetensors(path, weights).ok());
  return path;
}

// The TrainerError message of loading `path` into a fresh model of `arch`.
std::string LoadError(const std::string& path, const ModelArch& arch) {
  auto model = CreateModel(arch);
  std::ostringstream log;
  try {
    LoadInitialWeights(path, arch, *model, log);
  } catch (const TrainerError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    return e.what();
  }
  ADD_FAILURE() << "loaded " << path;
  return "";
}

TEST(InitialWeightsTest, AnotherModelsWeightsGiveItsLogitsFromAFileAndAFolder) {
  const ModelArch arch = Nano();
  torch::manual_seed(1);
  auto source = CreateModel(arch);
  source->eval();
  const std::string file = Saved("nano.safetensors", Weights(*source));
  const std::string folder = ::testing::TempDir() + "/nano_folder";
  mkdir(folder.c_str(), 0755);
  Saved("nano_folder/model.safetensors", Weights(*source));
  const torch::Tensor x = torch::randn({2, 1, 28, 28});
  const torch::Tensor expected = source->forward(x);
  for (const std::string& path : {file, folder}) {
    torch::manual_seed(2);
    auto model = CreateModel(arch);
    model->eval();
    std::ostringstream log;
    LoadInitialWeights(path, arch, *model, log);
    EXPECT_TRUE(torch::equal(model->forward(x), expected)) << path;  // Same weights, same arithmetic.
    EXPECT_EQ(log.str(), "") << path;
  }
}

// model.initial_checkpoint_sha256: the bytes loaded are the bytes hashed (the file is read once). The file's
// digest loads; another is refused (exit 2) naming the file and both digests, with no weight loaded.
TEST(InitialWeightsTest, TheDigestIsOfTheBytesLoaded) {
  const ModelArch arch = Nano();
  torch::manual_seed(1);
  auto source = CreateModel(arch);
  const std::string file = Saved("digested.safetensors", Weights(*source));
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  Sha256 sha;
  sha.Update(bytes.data(), bytes.size());
  const std::string digest = sha.HexDigest();
  torch::manual_seed(2);
  auto model = CreateModel(arch);
  std::ostringstream log;
  LoadInitialWeights(file, arch, *model, log, digest);
  EXPECT_TRUE(torch::equal(model->named_parameters()["pos_embed"], source->named_parameters()["pos_embed"]));

  const std::string other(64, 'a');
  torch::manual_seed(2);
  auto fresh = CreateModel(arch);
  const torch::Tensor before = fresh->named_parameters()["pos_embed"].clone();
  try {
    LoadInitialWeights(file, arch, *fresh, log, other);
    ADD_FAILURE() << "loaded with another digest";
  } catch (const TrainerError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_EQ(std::string(e.what()), "model.initial_checkpoint: the SHA-256 of " + file + " is " + digest +
                                         ", not model.initial_checkpoint_sha256 " + other +
                                         " that the run was submitted with (the file changed, or this "
                                         "worker holds another file at this path)");
  }
  EXPECT_TRUE(torch::equal(fresh->named_parameters()["pos_embed"], before));
}

TEST(InitialWeightsTest, AHeadOfAnotherSizeIsDroppedAndLogged) {
  torch::manual_seed(1);
  auto source = CreateModel(Nano(28, 10));
  const ModelArch arch = Nano(28, 7);
  torch::manual_seed(2);
  auto model = CreateModel(arch);
  const torch::Tensor head_before = model->named_parameters()["head.weight"].clone();
  std::ostringstream log;
  LoadInitialWeights(Saved("head10.safetensors", Weights(*source)), arch, *model, log);
  EXPECT_NE(log.str().find("10-class head, the model 7 classes"), std::string::npos) << log.str();
  EXPECT_TRUE(torch::equal(model->named_parameters()["head.weight"], head_before));
  EXPECT_TRUE(torch::equal(model->named_parameters()["blocks.1.mlp.fc2.weight"],
                           source->named_parameters()["blocks.1.mlp.fc2.weight"]));
}

TEST(InitialWeightsTest, PosEmbedIsResampledToTheNewGridKeepingTheClassToken) {
  torch::manual_seed(1);
  auto source = CreateModel(Nano(28));  // 4x4 grid.
  NamedTensors weights = Weights(*source);
  for (auto& [name, t] : weights) {
    // A constant grid stays constant under bicubic resampling (its weights sum to 1): a checkable value.
    if (name == "pos_embed")
      t = torch::cat({torch::full({1, 1, 32}, 5.f), torch::full({1, 16, 32}, 0.25f)}, 1);
  }
  const ModelArch arch = Nano(42);  // 6x6 grid.
  auto model = CreateModel(arch);
  std::ostringstream log;
  LoadInitialWeights(Saved("grid4.safetensors", weights), arch, *model, log);
  const torch::Tensor pos = model->named_parameters()["pos_embed"];
  ASSERT_EQ(pos.sizes(), (std::vector<int64_t>{1, 37, 32}));
  EXPECT_TRUE(torch::equal(pos.narrow(1, 0, 1), torch::full({1, 1, 32}, 5.f)));
  EXPECT_TRUE(torch::allclose(pos.narrow(1, 1, 36), torch::full({1, 36, 32}, 0.25f), 0, 1e-6));
  EXPECT_NE(log.str().find("resampled to the 6x6 grid"), std::string::npos) << log.str();
  // Resampling to the same grid is the identity, as timm returns it unchanged.
  const torch::Tensor same = torch::randn({1, 17, 8});
  EXPECT_TRUE(torch::allclose(ResampleAbsPosEmbed(same, 4, 1), same, 0, 1e-6));
}

TEST(InitialWeightsTest, StrictnessErrorsNameTheKeyAndBothShapes) {
  const ModelArch arch = Nano();
  auto source = CreateModel(arch);
  NamedTensors missing, unexpected, reshaped;
  for (const auto& [name, t] : Weights(*source)) {
    if (name != "blocks.0.norm1.weight") missing.emplace_back(name, t);
    unexpected.emplace_back(name, t);
    reshaped.emplace_back(name, name == "blocks.1.attn.proj.weight" ? torch::zeros({32, 16}) : t);
  }
  unexpected.emplace_back("blocks.9.extra", torch::zeros({3}));
  const std::string a = Saved("missing.safetensors", missing);
  EXPECT_NE(
      LoadError(a, arch).find(a + " does not fit vit_nano_patch7_28: missing blocks.0.norm1.weight [32]"),
      std::string::npos);
  EXPECT_NE(
      LoadError(Saved("unexpected.safetensors", unexpected), arch).find("unexpected blocks.9.extra [3]"),
      std::string::npos);
  EXPECT_NE(LoadError(Saved("reshaped.safetensors", reshaped), arch)
                .find("blocks.1.attn.proj.weight: the file's shape [32, 16], the model's [32, 32]"),
            std::string::npos);
}

TEST(InitialWeightsTest, DamagedFilesAndFoldersWithoutWeightsAreRefusedByName) {
  // A torch.save file is told by its bytes: garbage named .pth is refused as one, with the convert command.
  const std::string pth = ::testing::TempDir() + "/garbage.pth";
  { std::ofstream(pth) << "PK\x03\x04 and then nothing a zip needs"; }
  const std::string pth_error = LoadError(pth, Nano());
  EXPECT_NE(pth_error.find("model.initial_checkpoint: torch.save file " + pth + " is not a readable zip"),
            std::string::npos)
      << pth_error;
  const std::string empty = ::testing::TempDir() + "/empty_folder";
  mkdir(empty.c_str(), 0755);
  EXPECT_NE(LoadError(empty, Nano()).find("has neither model.safetensors nor pytorch_model.bin"),
            std::string::npos);
  const std::string damaged = ::testing::TempDir() + "/damaged.safetensors";
  { std::ofstream(damaged) << "xy"; }
  EXPECT_NE(LoadError(damaged, Nano()).find("safetensors file " + damaged + ": truncated"),
            std::string::npos);
}

}  // namespace
}  // namespace nmsparse
