#include "schemas/model_catalog.h"

#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace nmsparse {
namespace {

const std::vector<SparsityLocation> kAll = {SparsityLocation::kFF, SparsityLocation::kQ,
                                            SparsityLocation::kK,  SparsityLocation::kV,
                                            SparsityLocation::kO,  SparsityLocation::kC};

int64_t Count(const std::string& name) {
  auto arch = LookupModel(name);
  EXPECT_TRUE(arch.ok()) << arch.status();
  return ParameterCount(*arch);
}

// Published timm parameter counts (ViT: timm model cards; SwinV2-T: 28,347,154, small and base agree with the
// cards' 49.73M / 87.92M).
TEST(ModelCatalogTest, ParameterCountsMatchTimm) {
  EXPECT_EQ(Count("vit_tiny_patch16_224"), 5717416);
  EXPECT_EQ(Count("vit_small_patch16_224"), 22050664);
  EXPECT_EQ(Count("vit_base_patch16_224"), 86567656);
  EXPECT_EQ(Count("vit_large_patch16_224"), 304326632);
  EXPECT_EQ(Count("swinv2_tiny_window8_256"), 28347154);
  EXPECT_EQ(Count("swinv2_small_window8_256"), 49728418);
  EXPECT_EQ(Count("swinv2_base_window8_256"), 87918816);
}

// testdata/timm_catalog_models.txt: timm's create_model(name) parameters for every timm-named entry, as
// tools/timm_model_golden.py --catalog printed them ("model NAME {}", "PARAM D0,D1,...", "total N").
std::map<std::string, std::vector<ParameterShape>> ReadCatalogGolden(std::map<std::string, int64_t>* totals) {
  std::ifstream in("schemas/testdata/timm_catalog_models.txt");
  EXPECT_TRUE(in);
  std::map<std::string, std::vector<ParameterShape>> models;
  std::string current;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> word = absl::StrSplit(line, ' ');
    if (word[0] == "model") {
      current = word[1];
    } else if (word[0] == "total") {
      EXPECT_TRUE(absl::SimpleAtoi(word[1], &(*totals)[current])) << line;
    } else {
      ParameterShape p{word[0], {}};
      for (absl::string_view d : absl::StrSplit(word[1], ',')) {
        EXPECT_TRUE(absl::SimpleAtoi(d, &p.shape.emplace_back())) << line;
      }
      models[current].push_back(std::move(p));
    }
  }
  return models;
}

// Each catalogue entry that timm names has timm's parameter names, shapes (so its classes, image size and
// widths) and count; the nmsparse-only 28x28 models are the exception.
TEST(ModelCatalogTest, TimmNamedEntriesMatchTimmCreateModel) {
  std::map<std::string, int64_t> totals;
  const auto golden = ReadCatalogGolden(&totals);
  for (const std::string& name : ModelNames()) {
    if (absl::EndsWith(name, "_28")) continue;
    ASSERT_EQ(golden.count(name), 1u)
        << name << " is missing from the golden: add it to timm_model_golden.py";
    auto arch = LookupModel(name);
    ASSERT_TRUE(arch.ok()) << arch.status();
    const auto params = ModelParameters(*arch);
    const auto& timm = golden.at(name);
    ASSERT_EQ(params.size(), timm.size()) << name;
    for (size_t i = 0; i < timm.size(); ++i) {
      EXPECT_EQ(params[i].name, timm[i].name) << name;
      EXPECT_EQ(params[i].shape, timm[i].shape) << name << " " << timm[i].name;
    }
    EXPECT_EQ(ParameterCount(*arch), totals.at(name)) << name;
  }
  EXPECT_EQ(golden.size(), 16u + ModelAliases().size());
}

// Issue 40: timm's deit_*_patch16_224 are read as the catalogue's ViTs. What an alias builds is timm's own
// create_model(alias): the same parameter names, shapes and count as the entry it names.
TEST(ModelCatalogTest, TimmAliasesBuildTimmsModel) {
  std::map<std::string, int64_t> totals;
  const auto golden = ReadCatalogGolden(&totals);
  ASSERT_EQ(ModelAliases().size(), 3u);
  for (const auto& [alias, entry] : ModelAliases()) {
    EXPECT_EQ(CatalogName(alias), entry);
    ASSERT_EQ(golden.count(alias), 1u)
        << alias << " is missing from the golden: add it to timm_model_golden.py";
    auto arch = LookupModel(alias);
    ASSERT_TRUE(arch.ok()) << arch.status();
    const auto params = ModelParameters(*arch);
    const auto& timm = golden.at(alias);
    ASSERT_EQ(params.size(), timm.size()) << alias;
    for (size_t i = 0; i < timm.size(); ++i) {
      EXPECT_EQ(params[i].name, timm[i].name) << alias;
      EXPECT_EQ(params[i].shape, timm[i].shape) << alias << " " << timm[i].name;
    }
    EXPECT_EQ(ParameterCount(*arch), totals.at(alias)) << alias;
  }
  EXPECT_EQ(CatalogName("deit_tiny_distilled_patch16_224"), "");  // A second head: not the ViT.
  EXPECT_EQ(CatalogName("vit_tiny_patch16_224"), "vit_tiny_patch16_224");
}

TEST(ModelCatalogTest, SmallModelsForFashionMnist) {
  EXPECT_EQ(Count("vit_nano_patch7_28"), 27978);
  EXPECT_EQ(Count("vit_micro_patch4_28"), 205066);
  EXPECT_EQ(Count("swinv2_micro_window7_28"), 146806);
  auto micro = LookupModel("vit_micro_patch4_28");
  ASSERT_TRUE(micro.ok());
  EXPECT_EQ(micro->img_size / micro->patch_size, 7);  // 49 patches + cls = 50 tokens.
  EXPECT_EQ(micro->in_chans, 1);
  EXPECT_EQ(micro->num_classes, 10);
}

TEST(ModelCatalogTest, OverridesAndUnknownNames) {
  auto arch = LookupModel("vit_base_patch16_224", 32, 1, 10);
  ASSERT_TRUE(arch.ok());
  EXPECT_EQ(arch->img_size, 32);
  EXPECT_EQ(arch->in_chans, 1);
  EXPECT_EQ(arch->num_classes, 10);
  auto missing = LookupModel("vit_huge");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("unknown model 'vit_huge'"), std::string::npos);
  EXPECT_NE(missing.status().message().find("vit_micro_patch4_28"), std::string::npos);
  auto names = ModelNames();
  EXPECT_EQ(names.size(), 19u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

// timm's window12to16 / window12to24 fine-tunes keep the pre-training windows (12, and 6 for stage 3) for
// their position bias, and timm's cfg evaluates the 384 ones uncropped; the other entries have none.
TEST(ModelCatalogTest, FineTunedSwinV2KeepTheirPretrainingWindows) {
  for (const char* name : {"swinv2_base_window12to16_192to256", "swinv2_base_window12to24_192to384",
                           "swinv2_large_window12to16_192to256", "swinv2_large_window12to24_192to384"}) {
    auto arch = LookupModel(name);
    ASSERT_TRUE(arch.ok()) << arch.status();
    EXPECT_EQ(arch->pretrained_window_sizes, (std::vector<int>{12, 12, 12, 6})) << name;
    EXPECT_EQ(arch->num_classes, 1000) << name;
    EXPECT_EQ(arch->crop_pct, arch->img_size == 384 ? 1.0 : 0.9) << name;
  }
  EXPECT_TRUE(LookupModel("swinv2_base_window12_192")->pretrained_window_sizes.empty());
}

TEST(ModelCatalogTest, VitLayersInModuleOrder) {
  auto arch = LookupModel("vit_base_patch16_224");
  ASSERT_TRUE(arch.ok());
  auto layers = SparsifiableLayers(*arch, kAll);
  ASSERT_EQ(layers.size(), 1u + 12u * 6u);
  EXPECT_EQ(layers[0].name, "patch_embed.proj.weight");
  EXPECT_EQ(layers[0].shape, (std::vector<int64_t>{768, 3, 16, 16}));
  EXPECT_EQ(layers[1].name, "blocks.0.attn.qkv.weight");
  EXPECT_EQ(layers[1].location, SparsityLocation::kQ);
  EXPECT_EQ(layers[2].location, SparsityLocation::kK);
  EXPECT_EQ(layers[2].row_offset, 768);
  EXPECT_EQ(layers[3].location, SparsityLocation::kV);
  EXPECT_EQ(layers[3].row_offset, 1536);
  EXPECT_EQ(layers[3].shape, (std::vector<int64_t>{768, 768}));
  EXPECT_EQ(layers[4].name, "blocks.0.attn.proj.weight");
  EXPECT_EQ(layers[5].name, "blocks.0.mlp.fc1.weight");
  EXPECT_EQ(layers[5].shape, (std::vector<int64_t>{3072, 768}));
  EXPECT_EQ(layers[6].name, "blocks.0.mlp.fc2.weight");
  EXPECT_EQ(layers[6].shape, (std::vector<int64_t>{768, 3072}));
  EXPECT_EQ(layers[6].numel(), 768 * 3072);
  EXPECT_EQ(layers.back().name, "blocks.11.mlp.fc2.weight");

  auto ff = SparsifiableLayers(*arch, {SparsityLocation::kFF});
  ASSERT_EQ(ff.size(), 24u);
  for (const auto& l : ff) EXPECT_EQ(l.location, SparsityLocation::kFF);
}

TEST(ModelCatalogTest, SwinLayersPerStage) {
  auto arch = LookupModel("swinv2_tiny_window8_256");
  ASSERT_TRUE(arch.ok());
  auto layers = SparsifiableLayers(*arch, {SparsityLocation::kFF, SparsityLocation::kQ});
  ASSERT_EQ(layers.size(), 12u * 3u);
  EXPECT_EQ(layers[0].name, "layers.0.blocks.0.attn.qkv.weight");
  EXPECT_EQ(layers[0].shape, (std::vector<int64_t>{96, 96}));
  EXPECT_EQ(layers[1].name, "layers.0.blocks.0.mlp.fc1.weight");
  EXPECT_EQ(layers[1].shape, (std::vector<int64_t>{384, 96}));
  EXPECT_EQ(layers.back().name, "layers.3.blocks.1.mlp.fc2.weight");
  EXPECT_EQ(layers.back().shape, (std::vector<int64_t>{768, 3072}));
  for (const auto& l : layers) {
    EXPECT_EQ(l.name.find("downsample"), std::string::npos);
    EXPECT_EQ(l.name.find("cpb_mlp"), std::string::npos);
  }
  auto micro = LookupModel("swinv2_micro_window7_28");
  ASSERT_TRUE(micro.ok());
  auto conv = SparsifiableLayers(*micro, {SparsityLocation::kC});
  ASSERT_EQ(conv.size(), 1u);
  EXPECT_EQ(conv[0].shape, (std::vector<int64_t>{32, 1, 2, 2}));
}

}  // namespace
}  // namespace nmsparse
