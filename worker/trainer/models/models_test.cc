#include <torch/torch.h>

#include <array>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "schemas/model_catalog.h"
#include "schemas/model_resolution.h"
#include "schemas/semi_structured_config.h"
#include "schemas/sparsity_config.h"
#include "worker/sparsity/semi_structured/semi_structured_layers_setup.h"
#include "worker/trainer/interop/initial_weights.h"
#include "worker/trainer/kernels/fused_kernels_switch.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/models/swin_transformer_v2.h"

namespace nmsparse {
namespace {

ModelArch Arch(const std::string& name) {
  auto arch = LookupModel(name);
  EXPECT_TRUE(arch.ok()) << arch.status();
  return *arch;
}

std::map<std::string, std::vector<int64_t>> ParameterShapes(torch::nn::Module& model) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& item : model.named_parameters()) shapes[item.key()] = item.value().sizes().vec();
  return shapes;
}

// Every catalogued model, built once: its module's named_parameters() are exactly the catalogue's
// ModelParameters (names, shapes, order), so torch-free validation sees the parameters the trainer trains,
// and its parameter count is timm's. Published timm counts: ViT from the timm model cards (5.72M / 22.05M /
// 86.57M / 304.33M), SwinV2 from timm's results tables (28.35M / 49.73M / 87.92M); the exact integers are
// timm's sum(p.numel()).
TEST(ModelsTest, ModulesMatchCatalogueParametersAndTimmCounts) {
  const std::map<std::string, int64_t> timm_counts = {
      {"vit_tiny_patch16_224", 5717416},     {"vit_small_patch16_224", 22050664},
      {"vit_base_patch16_224", 86567656},    {"vit_large_patch16_224", 304326632},
      {"swinv2_tiny_window8_256", 28347154}, {"swinv2_small_window8_256", 49728418},
      {"swinv2_base_window8_256", 87918816},
  };
  for (const auto& name : ModelNames()) {
    const ModelArch arch = Arch(name);
    const auto expected = ModelParameters(arch);
    auto model = CreateModel(arch);
    const auto actual = model->named_parameters();
    ASSERT_EQ(actual.size(), expected.size()) << name;
    int64_t count = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(actual[i].key(), expected[i].name) << name << " parameter " << i;
      EXPECT_EQ(actual[i].value().sizes().vec(), expected[i].shape) << name << " " << expected[i].name;
      count += actual[i].value().numel();
    }
    EXPECT_EQ(count, ParameterCount(arch)) << name;
    auto timm = timm_counts.find(name);
    if (timm != timm_counts.end()) {
      EXPECT_EQ(count, timm->second) << name;
    }
  }
}

TEST(ModelsTest, VitParameterNamesAreTimms) {
  auto model = CreateModel(Arch("vit_micro_patch4_28"));
  auto shapes = ParameterShapes(*model);
  const std::map<std::string, std::vector<int64_t>> expected = {
      {"cls_token", {1, 1, 64}},
      {"pos_embed", {1, 50, 64}},
      {"patch_embed.proj.weight", {64, 1, 4, 4}},
      {"patch_embed.proj.bias", {64}},
      {"blocks.0.norm1.weight", {64}},
      {"blocks.0.attn.qkv.weight", {192, 64}},
      {"blocks.0.attn.qkv.bias", {192}},
      {"blocks.3.attn.proj.weight", {64, 64}},
      {"blocks.3.norm2.bias", {64}},
      {"blocks.3.mlp.fc1.weight", {256, 64}},
      {"blocks.3.mlp.fc2.weight", {64, 256}},
      {"norm.weight", {64}},
      {"head.weight", {10, 64}},
      {"head.bias", {10}},
  };
  for (const auto& [name, shape] : expected) {
    ASSERT_TRUE(shapes.count(name)) << name;
    EXPECT_EQ(shapes[name], shape) << name;
  }
  EXPECT_EQ(shapes.size(), 4u + 4u * 12u + 4u);
  EXPECT_FALSE(shapes.count("blocks.4.norm1.weight"));
}

TEST(ModelsTest, SwinV2ParameterNamesAreTimms) {
  auto model = CreateModel(Arch("swinv2_tiny_window8_256"));
  auto shapes = ParameterShapes(*model);
  const std::map<std::string, std::vector<int64_t>> expected = {
      {"patch_embed.proj.weight", {96, 3, 4, 4}},
      {"patch_embed.norm.weight", {96}},
      {"layers.0.blocks.0.attn.logit_scale", {3, 1, 1}},
      {"layers.0.blocks.0.attn.q_bias", {96}},
      {"layers.0.blocks.0.attn.v_bias", {96}},
      {"layers.0.blocks.0.attn.cpb_mlp.0.weight", {512, 2}},
      {"layers.0.blocks.0.attn.cpb_mlp.0.bias", {512}},
      {"layers.0.blocks.0.attn.cpb_mlp.2.weight", {3, 512}},
      {"layers.0.blocks.0.attn.qkv.weight", {288, 96}},
      {"layers.0.blocks.0.attn.proj.weight", {96, 96}},
      {"layers.0.blocks.1.norm1.weight", {96}},
      {"layers.0.blocks.1.mlp.fc1.weight", {384, 96}},
      {"layers.0.blocks.1.norm2.bias", {96}},
      {"layers.1.downsample.reduction.weight", {192, 384}},
      {"layers.1.downsample.norm.weight", {192}},
      {"layers.3.downsample.reduction.weight", {768, 1536}},
      {"layers.3.blocks.1.mlp.fc2.weight", {768, 3072}},
      {"norm.weight", {768}},
      {"head.fc.weight", {1000, 768}},
      {"head.fc.bias", {1000}},
  };
  for (const auto& [name, shape] : expected) {
    ASSERT_TRUE(shapes.count(name)) << name;
    EXPECT_EQ(shapes[name], shape) << name;
  }
  EXPECT_FALSE(shapes.count("layers.0.downsample.reduction.weight"));
  EXPECT_FALSE(shapes.count("layers.0.blocks.0.attn.qkv.bias"));
  EXPECT_FALSE(shapes.count("layers.0.blocks.0.attn.k_bias"));  // a buffer in timm
  EXPECT_FALSE(shapes.count("layers.0.blocks.0.attn.cpb_mlp.2.bias"));
}

// Every sparsifiable weight of the catalogue exists in the module with a compatible shape (qkv blocks are row
// slices of the fused weight).
TEST(ModelsTest, CatalogueLayersExistInModules) {
  const std::vector<SparsityLocation> all = {SparsityLocation::kFF, SparsityLocation::kQ,
                                             SparsityLocation::kK,  SparsityLocation::kV,
                                             SparsityLocation::kO,  SparsityLocation::kC};
  for (const auto& name : {"vit_micro_patch4_28", "swinv2_micro_window7_28"}) {
    const ModelArch arch = Arch(name);
    auto model = CreateModel(arch);
    auto shapes = ParameterShapes(*model);
    for (const auto& layer : SparsifiableLayers(arch, all)) {
      ASSERT_TRUE(shapes.count(layer.name)) << name << " " << layer.name;
      const auto& shape = shapes[layer.name];
      ASSERT_EQ(shape.size(), layer.shape.size()) << layer.name;
      EXPECT_GE(shape[0], layer.row_offset + layer.shape[0]) << layer.name;
      for (size_t d = 1; d < shape.size(); ++d) EXPECT_EQ(shape[d], layer.shape[d]) << layer.name;
    }
  }
}

TEST(ModelsTest, SmallModelsForwardShapes) {
  torch::manual_seed(0);
  for (const auto& name : {"vit_nano_patch7_28", "vit_micro_patch4_28", "swinv2_micro_window7_28"}) {
    auto model =
        CreateModel(Arch(name), DropOptions().drop_rate(0.1).drop_path_rate(0.1).attn_drop_rate(0.1));
    auto images = torch::randn({3, 1, 28, 28});
    model->train();
    auto logits = model->forward(images);
    EXPECT_EQ(logits.sizes().vec(), (std::vector<int64_t>{3, 10})) << name;
    logits.sum().backward();
    model->eval();
    auto a = model->forward(images);
    auto b = model->forward(images);
    EXPECT_TRUE(torch::equal(a, b)) << name << ": eval must be deterministic (no dropout)";
    EXPECT_TRUE(torch::isfinite(a).all().item<bool>()) << name;
  }
}

// The fused CPU kernels (attention, Mlp, GELU) change how, not what, the models compute: the same weights
// give the same loss and gradients with them switched off (ATen's composite ops), for both families.
TEST(ModelsTest, FusedKernelsMatchCompositeOps) {
  for (const auto& name : {"vit_micro_patch4_28", "swinv2_micro_window7_28"}) {
    torch::manual_seed(1);
    auto model = CreateModel(Arch(name));
    auto images = torch::randn({4, 1, 28, 28});
    auto targets = torch::randint(0, 10, {4}, torch::kInt64);
    auto loss_and_grads = [&](bool fused) {
      SetFusedKernelsEnabled(fused);
      model->zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model->forward(images), targets);
      loss.backward();
      std::vector<torch::Tensor> grads = {loss.detach()};
      for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
      return grads;
    };
    const auto composite = loss_and_grads(false);
    const auto fused = loss_and_grads(true);
    EXPECT_NEAR(fused[0].item<double>(), composite[0].item<double>(), 1e-5) << name;
    for (size_t i = 1; i < fused.size(); ++i) {
      const double scale = composite[i].abs().max().item<double>();
      EXPECT_LE((fused[i] - composite[i]).abs().max().item<double>(), 1e-4 * scale + 1e-7)
          << name << " gradient " << i;
    }
  }
}

TEST(ModelsTest, VitTimmInitialisation) {
  torch::manual_seed(0);
  auto model = CreateModel(Arch("vit_micro_patch4_28"));
  auto params = model->named_parameters();
  EXPECT_NEAR(params["pos_embed"].std().item<double>(), 0.02, 0.002);
  EXPECT_LT(params["cls_token"].abs().max().item<double>(), 1e-4);
  EXPECT_NEAR(params["blocks.0.mlp.fc1.weight"].std().item<double>(), 0.02, 0.002);
  EXPECT_EQ(params["blocks.0.mlp.fc1.bias"].abs().sum().item<double>(), 0.0);
}

TEST(ModelsTest, SwinV2WindowsShiftsAndBuffers) {
  auto model = std::make_shared<SwinTransformerV2Impl>(Arch("swinv2_micro_window7_28"), DropOptions());
  // Stage 0 runs at 14x14 (patch 2): window 7, odd blocks shifted by 3. Stage 1 at 7x7 fits one window: no
  // shift.
  auto* stage0 = model->layers[0]->as<SwinV2StageImpl>();
  auto* stage1 = model->layers[1]->as<SwinV2StageImpl>();
  auto* b00 = stage0->blocks[0]->as<SwinV2BlockImpl>();
  auto* b01 = stage0->blocks[1]->as<SwinV2BlockImpl>();
  auto* b11 = stage1->blocks[1]->as<SwinV2BlockImpl>();
  EXPECT_EQ(b00->shift_size()[0], 0);
  EXPECT_EQ(b01->shift_size()[0], 3);
  EXPECT_EQ(b11->shift_size()[0], 0);
  EXPECT_FALSE(b00->attn_mask.defined());
  ASSERT_TRUE(b01->attn_mask.defined());
  EXPECT_EQ(b01->attn_mask.sizes().vec(), (std::vector<int64_t>{4, 49, 49}));
  // The top-left window holds a single region (no masking); the bottom-right one has four.
  EXPECT_EQ(b01->attn_mask[0].abs().sum().item<double>(), 0.0);
  EXPECT_GT(b01->attn_mask[3].lt(-50).sum().item<int64_t>(), 0);
  auto& table = b01->attn->relative_coords_table;
  EXPECT_EQ(table.sizes().vec(), (std::vector<int64_t>{1, 13, 13, 2}));
  EXPECT_NEAR(table.max().item<double>(), std::log2(9.0) / 3.0, 1e-5);  // edge offset: 8 -> log2(9)/log2(8)
  auto& index = b01->attn->relative_position_index;
  EXPECT_EQ(index.min().item<int64_t>(), 0);
  EXPECT_EQ(index.max().item<int64_t>(), 13 * 13 - 1);
  EXPECT_EQ(index[0][0].item<int64_t>(), 6 * 13 + 6);  // zero offset sits in the middle of the table
}

// One case of testdata/timm_model_kwargs.txt: timm's create_model(name, **kwargs) parameters.
// A golden file's model line, "NAME {key: value, ...}" (timm's create_model(NAME, **kwargs)), as the spec's
// model section, parsed, validated and resolved.
absl::StatusOr<ModelArch> ArchOfGoldenLine(const std::string& model_line) {
  const std::pair<std::string, std::string> name_kwargs = absl::StrSplit(model_line, absl::MaxSplits(' ', 1));
  const std::string section = name_kwargs.second.substr(1, name_kwargs.second.size() - 2);
  absl::StatusOr<ExperimentConfig> config = ParseExperimentYaml(
      "model: {name: " + name_kwargs.first + ", " + section + "}\ndata: {dataset: synthetic}\n", "kwargs");
  if (!config.ok()) return config.status();
  if (absl::Status valid = ValidateExperiment(*config); !valid.ok()) return valid;
  return ResolveModel(config->model);
}

struct TimmCase {
  std::string model_line;  // "NAME {kwargs}": the spec's model section.
  std::vector<ParameterShape> parameters;
  int64_t total = 0;
};

std::vector<TimmCase> ReadTimmGolden(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<TimmCase> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::pair<std::string, std::string> word = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    if (word.first == "model") {
      cases.push_back({word.second, {}, 0});
    } else if (word.first == "total") {
      EXPECT_TRUE(absl::SimpleAtoi(word.second, &cases.back().total)) << line;
    } else {
      ParameterShape p{word.first, {}};
      for (absl::string_view d : absl::StrSplit(word.second, ',')) {
        int64_t size = 0;
        EXPECT_TRUE(absl::SimpleAtoi(d, &size)) << line;
        p.shape.push_back(size);
      }
      cases.back().parameters.push_back(std::move(p));
    }
  }
  return cases;
}

// The spec's model keys with timm's model_kwargs (issue 28) build timm's model: the resolved architecture's
// parameters (schemas/model_catalog.h) and the LibTorch module's named_parameters() have timm's names,
// shapes and count, as tools/timm_model_golden.py printed them from timm's create_model(name, **kwargs).
TEST(ModelsTest, ModelKwargsMatchTimmCreateModel) {
  const auto cases = ReadTimmGolden("worker/trainer/models/testdata/timm_model_kwargs.txt");
  ASSERT_EQ(cases.size(), 4u);
  for (const TimmCase& c : cases) {
    auto arch = ArchOfGoldenLine(c.model_line);
    ASSERT_TRUE(arch.ok()) << c.model_line << ": " << arch.status();
    const auto catalogue = ModelParameters(*arch);
    auto model = CreateModel(*arch);
    const auto module = model->named_parameters();
    ASSERT_EQ(catalogue.size(), c.parameters.size()) << c.model_line;
    ASSERT_EQ(module.size(), c.parameters.size()) << c.model_line;
    for (size_t i = 0; i < c.parameters.size(); ++i) {
      const ParameterShape& timm = c.parameters[i];
      EXPECT_EQ(catalogue[i].name, timm.name) << c.model_line;
      EXPECT_EQ(catalogue[i].shape, timm.shape) << c.model_line << " " << timm.name;
      EXPECT_EQ(module[i].key(), timm.name) << c.model_line;
      EXPECT_EQ(module[i].value().sizes().vec(), timm.shape) << c.model_line << " " << timm.name;
    }
    EXPECT_EQ(ParameterCount(*arch), c.total) << c.model_line;
    model->forward(torch::randn({2, arch->in_chans, arch->img_size, arch->img_size}));
  }
}

// One case of testdata/timm_swinv2_forward.txt (tools/timm_swinv2_forward_golden.py): timm's per-stage
// checksums {L1, sum, sin-weighted sum} and logits for fixed float64 weights and images.
struct TimmForwardCase {
  std::string model_line;
  std::vector<std::string> files;  // testdata/timm_vit_import.txt: the files timm saved the model into.
  std::vector<int64_t> input_shape;
  std::vector<std::array<double, 3>> stages;
  std::vector<std::vector<double>> logits;
};

std::vector<double> Numbers(absl::string_view text) {
  std::vector<double> values;
  for (absl::string_view word : absl::StrSplit(text, absl::ByAnyChar(" ,"), absl::SkipEmpty())) {
    EXPECT_TRUE(absl::SimpleAtod(word, &values.emplace_back())) << text;
  }
  return values;
}

std::vector<TimmForwardCase> ReadTimmForwardGolden(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<TimmForwardCase> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::pair<std::string, std::string> word = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    if (word.first == "model") {
      cases.push_back({word.second, {}, {}, {}, {}});
    } else if (word.first == "files") {
      cases.back().files = absl::StrSplit(word.second, ' ');
    } else if (word.first == "input") {
      for (double d : Numbers(word.second)) cases.back().input_shape.push_back(static_cast<int64_t>(d));
    } else if (word.first == "stage") {
      const std::vector<double> v = Numbers(word.second);  // index, L1, sum, weighted sum
      EXPECT_EQ(v.size(), 4u) << line;
      cases.back().stages.push_back({v.at(1), v.at(2), v.at(3)});
    } else {
      cases.back().logits.push_back(Numbers(word.second));
    }
  }
  return cases;
}

// Fills the inputs exactly as the golden's generator does: parameter i's flat element k is
// 0.1*sin(0.37k + 1.3i + 0.5); the images' element k is 0.5*sin(0.11k).
torch::Tensor FillLikeForwardGolden(torch::nn::Module& model, const std::vector<int64_t>& input_shape) {
  torch::NoGradGuard no_grad;
  int64_t i = 0;
  for (auto& p : model.parameters()) {
    auto k = torch::arange(p.numel(), torch::kFloat64);
    p.copy_((0.1 * torch::sin(0.37 * k + 1.3 * static_cast<double>(i++) + 0.5)).view_as(p));
  }
  int64_t n = 1;
  for (int64_t d : input_shape) n *= d;
  return (0.5 * torch::sin(0.11 * torch::arange(n, torch::kFloat64))).view(input_shape);
}

// The fine-tune variants' position bias scales its relative coordinates by pretrained_window_sizes, as
// timm's WindowAttention: the catalogued swinv2_base_window12to16_192to256 (its own 12, 12, 12, 6) and given
// sizes, shrunk to a small model, compute timm's function. Both sides run in float64 but for the relative
// coordinates table, which timm builds in float32 before the model is cast: an ulp of difference in each
// entry (PyTorch's and LibTorch's log2) would move a stage's checksums by at most ~5e-10 of its L1 norm
// (measured by perturbing each entry by 1.2e-7 relative), float64 rounding over these sums by ~1e-13 of it
// (the agreement seen), so 5e-9 x L1 holds with a margin of 10; scaling by the window instead moves stage 0's
// sum by 7e-8 of its L1 norm and stage 1's by 6e-5. The pooled logits hardly depend on the bias (~1e-8):
// they check the head's path, within 1e-9.
TEST(ModelsTest, SwinV2FineTuneForwardMatchesTimm) {
  const auto cases = ReadTimmForwardGolden("worker/trainer/models/testdata/timm_swinv2_forward.txt");
  ASSERT_EQ(cases.size(), 2u);
  for (const TimmForwardCase& c : cases) {
    auto arch = ArchOfGoldenLine(c.model_line);
    ASSERT_TRUE(arch.ok()) << c.model_line << ": " << arch.status();
    ASSERT_EQ(arch->pretrained_window_sizes.size(), 4u) << c.model_line;
    SwinTransformerV2Impl model(*arch, DropOptions());
    // As Python's Module.double(): floating parameters and buffers only (LibTorch's to(dtype) would cast the
    // relative position index too).
    for (auto& t : model.parameters()) t.set_data(t.to(torch::kFloat64));
    for (auto& t : model.buffers()) {
      if (t.is_floating_point()) t.set_data(t.to(torch::kFloat64));
    }
    model.eval();
    const torch::Tensor images = FillLikeForwardGolden(model, c.input_shape);
    torch::NoGradGuard no_grad;
    torch::Tensor x = model.patch_embed(images);
    ASSERT_EQ(model.layers->size(), c.stages.size());
    for (size_t s = 0; s < c.stages.size(); ++s) {
      x = model.layers[s]->as<SwinV2StageImpl>()->forward(x);
      const torch::Tensor flat = x.flatten();
      const torch::Tensor weights = torch::sin(0.05 * torch::arange(flat.numel(), torch::kFloat64));
      const auto& [l1, sum, weighted] = c.stages[s];
      const double tolerance = 5e-9 * l1;
      EXPECT_NEAR(flat.abs().sum().item<double>(), l1, tolerance) << c.model_line << " stage " << s;
      EXPECT_NEAR(flat.sum().item<double>(), sum, tolerance) << c.model_line << " stage " << s;
      EXPECT_NEAR((flat * weights).sum().item<double>(), weighted, tolerance)
          << c.model_line << " stage " << s;
    }
    const torch::Tensor logits = model.forward(images);
    ASSERT_EQ(logits.size(0), static_cast<int64_t>(c.logits.size()));
    for (size_t b = 0; b < c.logits.size(); ++b) {
      ASSERT_EQ(logits.size(1), static_cast<int64_t>(c.logits[b].size()));
      for (size_t j = 0; j < c.logits[b].size(); ++j) {
        EXPECT_NEAR(logits[b][j].item<double>(), c.logits[b][j], 1e-9) << c.model_line << " image " << b;
      }
    }
  }
}

// Every linear of the attention goes through its layer's forward, so a semi-structured 2:4 layer chosen there
// runs (here a dense model: its dense path, saying so): ViT's qkv and proj, and SwinV2's qkv with its
// q/v biases, which once called torch::linear on the effective weight directly and bypassed the 2:4 layer.
TEST(ModelsTest, AttentionLinearsReachTheirSemiStructuredLayers) {
  for (const auto& [name, pattern] : std::vector<std::pair<std::string, std::string>>{
           {"vit_nano_patch7_28", "blocks.*.attn.*"},
           {"swinv2_micro_window7_28", "layers.*.blocks.*.attn.qkv"}}) {
    const ModelArch arch = Arch(name);
    auto model = CreateModel(arch);
    SemiStructuredConfig config;
    config.layers = {pattern};
    auto layers = SemiStructuredLayers::Install(config, SparsityConfig(), 1, 1, *model, torch::kCPU);
    ASSERT_TRUE(layers.ok()) << layers.status();
    model->forward(torch::randn({2, arch.in_chans, arch.img_size, arch.img_size}));
    for (const SemiStructuredLayerReport& r : (*layers)->Report()) {
      EXPECT_EQ(r.path.reason, "dense rule") << name << " " << r.name;  // Ran ("not run yet" if bypassed).
    }
  }
}

// model.initial_checkpoint against timm itself (tools/timm_import_golden.py): the files timm wrote for a ViT
// with custom kwargs (save_for_hf's folder, torch.save's plain state dict, and the state dict wrapped as
// timm's train.py saves it, with an argparse.Namespace beside it) and for a SwinV2 with custom depths
// (torch.save of {'model': state_dict}), loaded through the trainer's own path, give the logits timm
// computed. Tolerance: both sides run the same float32 function with other summation orders (LibTorch's or
// the fused kernels' GEMMs, timm's SDPA); a dot product of K terms in float32 is off by at most
// K*u*sum|a_i*b_i| (u = 2^-24), K <= 128 here (the MLP's hidden width, the SwinV2's second stage's too), and
// a chain of stages (ViT: patch embedding, per block q/k/v, attention, projection, fc1, fc2, then the head:
// about a dozen; the SwinV2 adds the patch merging and its position-bias MLP, of 512 terms once per block,
// about 16) with LayerNorms in between keeping activations O(1): 16 * 128 * 6e-8 ~ 1.2e-4 relative to the
// logits' scale, and the bias MLP's error reaches the logits only through a softmax, so 2e-4.
TEST(ModelsTest, TimmSavedWeightsGiveTimmsLogits) {
  const auto cases = ReadTimmForwardGolden("worker/trainer/models/testdata/timm_vit_import.txt");
  ASSERT_EQ(cases.size(), 2u);
  for (const TimmForwardCase& c : cases) {
    auto arch = ArchOfGoldenLine(c.model_line);
    ASSERT_TRUE(arch.ok()) << c.model_line << ": " << arch.status();
    ASSERT_FALSE(c.files.empty()) << c.model_line;
    for (const std::string& file : c.files) {
      SCOPED_TRACE(file);
      auto model = CreateModel(*arch);
      std::ostringstream log;
      LoadInitialWeights("worker/trainer/models/testdata/" + file, *arch, *model, log);
      EXPECT_EQ(log.str(), "");  // Nothing adapted: timm's names and shapes are the model's.
      model->eval();
      torch::NoGradGuard no_grad;
      int64_t n = 1;
      for (int64_t d : c.input_shape) n *= d;
      const torch::Tensor images =
          torch::sin(0.11 * torch::arange(n, torch::kFloat64)).view(c.input_shape).to(torch::kFloat32);
      const torch::Tensor logits = model->forward(images).to(torch::kFloat64);
      ASSERT_EQ(logits.size(0), static_cast<int64_t>(c.logits.size()));
      const double scale = 1.0 + logits.abs().max().item<double>();
      for (size_t b = 0; b < c.logits.size(); ++b) {
        ASSERT_EQ(logits.size(1), static_cast<int64_t>(c.logits[b].size()));
        for (size_t j = 0; j < c.logits[b].size(); ++j) {
          EXPECT_NEAR(logits[b][j].item<double>(), c.logits[b][j], 2e-4 * scale)
              << "image " << b << " class " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace nmsparse
