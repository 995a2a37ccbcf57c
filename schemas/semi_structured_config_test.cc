#include "schemas/semi_structured_config.h"

#include "gtest/gtest.h"
#include "schemas/content_hash.h"
#include "schemas/experiment_config.h"
#include "schemas/semi_structured_layers.h"

namespace nmsparse {
namespace {

// vit_micro_patch4_28: 4 blocks of width 64, MLP 256, 10 classes.
constexpr char kSpec[] = R"(name: semi
model: {name: vit_micro_patch4_28}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FF}
)";

absl::StatusOr<SemiStructuredConfig> Parse(const std::string& yaml) {
  return ParseSemiStructuredConfig(YAML::Load(yaml), "semi_structured");
}

std::string ParseError(const std::string& yaml) {
  auto c = Parse(yaml);
  EXPECT_FALSE(c.ok()) << yaml;
  return std::string(c.status().message());
}

TEST(SemiStructuredConfigTest, DefaultsAndEveryKey) {
  auto empty = Parse("{}");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->Enabled());
  EXPECT_EQ(empty->accelerate, Accelerate::kAuto);
  EXPECT_EQ(empty->mask, SemiStructuredMask::kExact);
  auto c = Parse(
      "{layers: blocks.*.mlp.fc1, activation_layers: [blocks.*.mlp.fc2], accelerate: FORCE, "
      "mask: Transposable, margin: 0.1, dense_after: {fraction: 0.7}, decision_cache: /tmp/t.tsv}");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->layers, std::vector<std::string>{"blocks.*.mlp.fc1"});
  EXPECT_EQ(c->activation_layers, std::vector<std::string>{"blocks.*.mlp.fc2"});
  EXPECT_EQ(c->accelerate, Accelerate::kForce);
  EXPECT_EQ(c->mask, SemiStructuredMask::kTransposable);
  EXPECT_DOUBLE_EQ(c->margin, 0.1);
  EXPECT_DOUBLE_EQ(c->dense_after_fraction, 0.7);
  EXPECT_EQ(c->dense_after_phase, -1);
  EXPECT_EQ(c->decision_cache, "/tmp/t.tsv");
  auto phase = Parse("{layers: [a], dense_after: {phase: 2}}");
  ASSERT_TRUE(phase.ok());
  EXPECT_EQ(phase->dense_after_phase, 2);
}

TEST(SemiStructuredConfigTest, ErrorsNameTheKey) {
  EXPECT_NE(ParseError("{layer: x}").find("semi_structured.layer"), std::string::npos);
  EXPECT_NE(ParseError("{accelerate: fast}").find("semi_structured.accelerate"), std::string::npos);
  EXPECT_NE(ParseError("{mask: both}").find("semi_structured.mask"), std::string::npos);
  EXPECT_NE(ParseError("{margin: 1}").find("semi_structured.margin"), std::string::npos);
  EXPECT_NE(ParseError("{dense_after: {fraction: 0}}").find("semi_structured.dense_after.fraction"),
            std::string::npos);
  EXPECT_NE(ParseError("{dense_after: {fraction: 0.5, phase: 1}}").find("semi_structured.dense_after"),
            std::string::npos);
  EXPECT_NE(ParseError("{dense_after: 0.5}").find("semi_structured.dense_after"), std::string::npos);
  EXPECT_NE(ParseError("{layers: ['']}").find("semi_structured.layers"), std::string::npos);
}

TEST(SemiStructuredConfigTest, YamlRoundTrips) {
  auto c = Parse("{layers: [a, b], activation_layers: c, accelerate: off, dense_after: {phase: 1}}");
  ASSERT_TRUE(c.ok());
  auto back = ParseSemiStructuredConfig(SemiStructuredConfigToYaml(*c), "semi_structured");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *c);
}

TEST(SemiStructuredConfigTest, SelectsByPatternInModuleOrder) {
  const std::vector<LinearShape> linears = {{"blocks.0.attn.qkv", 192, 64}, {"blocks.0.mlp.fc1", 256, 64},
                                            {"blocks.0.mlp.fc2", 64, 256},  {"blocks.1.mlp.fc1", 256, 64},
                                            {"blocks.1.mlp.fc2", 64, 256},  {"head", 10, 64}};
  SemiStructuredConfig config;
  config.layers = {"blocks.*.mlp.fc1"};
  config.activation_layers = {"blocks.1.mlp.fc2"};
  auto chosen = SelectSemiStructuredLayers(config, linears);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  ASSERT_EQ(chosen->size(), 3u);
  EXPECT_EQ((*chosen)[0].layer.name, "blocks.0.mlp.fc1");
  EXPECT_EQ((*chosen)[1].layer.name, "blocks.1.mlp.fc1");
  EXPECT_EQ((*chosen)[2].layer.name, "blocks.1.mlp.fc2");
  EXPECT_EQ((*chosen)[2].kind, SemiStructuredKind::kActivation);

  config.layers = {"blocks.*.mlp.fc3"};
  auto none = SelectSemiStructuredLayers(config, linears);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("semi_structured.layers[0]"), std::string::npos);
  EXPECT_NE(none.status().message().find("blocks.*.mlp.fc3"), std::string::npos);

  config.layers = {"blocks.1.mlp.*"};
  auto both = SelectSemiStructuredLayers(config, linears);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("blocks.1.mlp.fc2"), std::string::npos);

  config.layers = {"head"};
  config.activation_layers.clear();
  config.mask = SemiStructuredMask::kTransposable;  // head has 10 rows: no 2:4 along out_features.
  auto head = SelectSemiStructuredLayers(config, linears);
  ASSERT_FALSE(head.ok());
  EXPECT_NE(head.status().message().find("out_features"), std::string::npos);
}

TEST(SemiStructuredConfigTest, SpecValidationChecksTheEngineRunsTwoFour) {
  auto ok =
      ParseExperimentYaml(std::string(kSpec) + "semi_structured: {layers: 'blocks.*.mlp.*'}\n", "e.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ValidateExperiment(*ok).ok()) << ValidateExperiment(*ok);
  auto arch = LookupModel("vit_micro_patch4_28");
  ASSERT_TRUE(arch.ok());
  auto chosen = ChooseSemiStructuredLayers(ok->semi_structured, ok->sparsity, *arch);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(chosen->size(), 8u);  // fc1 and fc2 of 4 blocks.
  const std::string listing = FormatSemiStructuredChoices(ok->semi_structured, *chosen);
  EXPECT_EQ(listing.substr(0, listing.find('\n')),
            "semi-structured 2:4 layers: 8 (accelerate auto, mask exact, margin 0.05, dense never)");
  EXPECT_NE(
      listing.find("  blocks.0.mlp.fc1 weight_2:4 [256, 64]\n  blocks.0.mlp.fc2 weight_2:4 [64, 256]\n"),
      std::string::npos)
      << listing;
  EXPECT_EQ(FormatSemiStructuredChoices(ok->semi_structured, {}), "");

  // qkv is not sparsified by sparsity_loc FF: the 2:4 kernel would have no 2:4 mask to run.
  auto qkv =
      ParseExperimentYaml(std::string(kSpec) + "semi_structured: {layers: 'blocks.0.attn.qkv'}\n", "e.yaml");
  ASSERT_TRUE(qkv.ok());
  const absl::Status st = ValidateExperiment(*qkv);
  EXPECT_NE(st.message().find("blocks.0.attn.qkv"), std::string::npos) << st;

  auto phase = ParseExperimentYaml(
      std::string(kSpec) + "semi_structured: {layers: 'blocks.0.mlp.fc1', dense_after: {phase: 1}}\n",
      "e.yaml");
  ASSERT_TRUE(phase.ok());
  EXPECT_NE(ValidateExperiment(*phase).message().find("dense_after.phase"), std::string::npos);
}

TEST(SemiStructuredConfigTest, CanonicalYamlCarriesTheSectionOnlyWhenUsed) {
  auto plain = ParseExperimentYaml(kSpec, "e.yaml");
  auto unused = ParseExperimentYaml(std::string(kSpec) + "semi_structured: {accelerate: force}\n", "e.yaml");
  auto used =
      ParseExperimentYaml(std::string(kSpec) + "semi_structured: {layers: [blocks.0.mlp.fc1]}\n", "e.yaml");
  ASSERT_TRUE(plain.ok() && unused.ok() && used.ok());
  EXPECT_EQ(CanonicalYaml(*plain), CanonicalYaml(*unused));  // Older runs keep their hash.
  EXPECT_EQ(CanonicalYaml(*plain).find("semi_structured"), std::string::npos);
  const std::string text = CanonicalYaml(*used);
  EXPECT_NE(text.find("semi_structured"), std::string::npos);
  auto back = ParseExperimentYaml(text, "canonical.yaml");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->semi_structured, used->semi_structured);
  EXPECT_NE(ContentHash(*plain), ContentHash(*used));
}

}  // namespace
}  // namespace nmsparse
