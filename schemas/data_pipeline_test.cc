// The data keys of timm's transforms: parsing, canonical form, errors naming the key, the model's timm
// defaults, and the pipeline description `nmctl validate` prints.
#include "schemas/data_pipeline.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "schemas/rand_augment_config.h"

namespace nmsparse {
namespace {

ExperimentConfig Parse(const std::string& data, const std::string& model = "vit_base_patch16_224") {
  absl::StatusOr<ExperimentConfig> c = ParseExperimentYaml(
      "{model: {name: " + model + "}, data: {dataset: imagefolder, path: /data" + data + "}}", "spec.yaml");
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : ExperimentConfig{};
}

std::string Error(const std::string& data, const std::string& model = "vit_base_patch16_224") {
  absl::StatusOr<ExperimentConfig> c = ParseExperimentYaml(
      "{model: {name: " + model + "}, data: {dataset: imagefolder, path: /data" + data + "}}", "spec.yaml");
  if (!c.ok()) return std::string(c.status().message());
  absl::Status st = ValidateExperiment(*c);
  return st.ok() ? "" : std::string(st.message());
}

TEST(DataPipelineTest, KeysAtTheirDefaultsLeaveTheCanonicalFormAsItWas) {
  const std::string plain = CanonicalYaml(Parse(""));
  EXPECT_EQ(plain, CanonicalYaml(Parse(", color_jitter: 0.4, crop_scale: [0.08, 1], re_mode: pixel")));
  for (const char* key :
       {"auto_augment", "crop_scale", "crop_ratio", "train_interpolation", "vflip", "color_jitter", "re_prob",
        "re_mode", "re_count", "crop_pct", "interpolation", "mean:", "std:"}) {
    EXPECT_EQ(plain.find(std::string("  ") + key), std::string::npos) << key;
  }
}

TEST(DataPipelineTest, KeysParseAndRoundTrip) {
  const ExperimentConfig c = Parse(
      ", auto_augment: rand-m9-n3-mstd0.5-inc1, crop_scale: [0.25, 1.0], crop_ratio: [0.5, 2], "
      "train_interpolation: BICUBIC, vflip: 0.5, re_prob: 0.25, re_mode: const, re_count: 3, crop_pct: 0.95, "
      "interpolation: bilinear, mean: [0.4, 0.5, 0.6], std: [0.2]");
  EXPECT_EQ(c.data.auto_augment, "rand-m9-n3-mstd0.5-inc1");
  EXPECT_EQ(c.data.crop_ratio, (std::vector<double>{0.5, 2.0}));
  EXPECT_EQ(c.data.train_interpolation, "bicubic");
  EXPECT_EQ(c.data.re_count, 3);
  const std::string text = CanonicalYaml(c);
  EXPECT_NE(text.find("crop_scale: [0.25, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("mean: [0.4, 0.5, 0.6]"), std::string::npos) << text;
  absl::StatusOr<ExperimentConfig> again = ParseExperimentYaml(text, "canonical");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, c);
}

TEST(DataPipelineTest, BadValuesNameTheKey) {
  EXPECT_NE(Error(", auto_augment: rand-m9-x2").find("data.auto_augment"), std::string::npos);
  EXPECT_NE(Error(", auto_augment: rand-m9-x2").find("section 'x2'"), std::string::npos);
  EXPECT_NE(Error(", auto_augment: original").find("must start with 'rand-'"), std::string::npos);
  EXPECT_NE(Error(", crop_scale: [0.5]").find("data.crop_scale"), std::string::npos);
  EXPECT_NE(Error(", crop_scale: [0, 1]").find("data.crop_scale[0]"), std::string::npos);
  EXPECT_NE(Error(", crop_scale: [0.9, 0.2]").find("data.crop_scale: [0.9, 0.2] is no range"),
            std::string::npos);
  EXPECT_NE(Error(", crop_ratio: [2, 0.5]").find("data.crop_ratio"), std::string::npos);
  EXPECT_NE(Error(", re_mode: noise").find("data.re_mode"), std::string::npos);
  EXPECT_NE(Error(", re_count: 65").find("data.re_count"), std::string::npos);
  EXPECT_NE(Error(", train_interpolation: lanczos").find("data.train_interpolation"), std::string::npos);
  EXPECT_NE(Error(", interpolation: random").find("data.interpolation"), std::string::npos);
  EXPECT_NE(Error(", std: [0.5, 0, 0.5]").find("data.std[1]"), std::string::npos);
  EXPECT_NE(Error(", mean: [0.5, 0.5]").find("data.mean"), std::string::npos);
  EXPECT_NE(Error(", mean: [0.5, 0.5, 0.5]", "vit_nano_patch7_28").find("data.mean: 3 values"),
            std::string::npos);
  EXPECT_EQ(Error(", mean: [0.5]", "vit_nano_patch7_28"), "");
}

TEST(DataPipelineTest, RandAugmentGrammarAsTimmReadsIt) {
  absl::StatusOr<RandAugmentConfig> c = ParseRandAugmentConfig("rand-m15-n2-p1-mstd0");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->magnitude, 15);
  EXPECT_EQ(c->num_layers, 2);
  EXPECT_EQ(c->prob, 1.0);
  EXPECT_EQ(c->magnitude_std, 0.0);
  c = ParseRandAugmentConfig("rand-mstd101-mmax20-inc1");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(std::isinf(c->magnitude_std));
  EXPECT_EQ(c->magnitude_max, 20);
  EXPECT_TRUE(c->increasing);
  EXPECT_EQ(c->magnitude, 10);  // timm's defaults.
  EXPECT_EQ(c->prob, 0.5);
  EXPECT_FALSE(ParseRandAugmentConfig("rand-p2").ok());
  EXPECT_FALSE(ParseRandAugmentConfig("rand-inc2").ok());
  EXPECT_FALSE(ParseRandAugmentConfig("augmix-m5").ok());
}

// timm 1.0.31's pretrained cfgs: ViT crop_pct 0.9, bicubic, mean/std 0.5; SwinV2 ImageNet's mean/std.
TEST(DataPipelineTest, ModelDefaultsAreTimms) {
  absl::StatusOr<DataPipeline> vit = ResolveDataPipeline(Parse(""));
  ASSERT_TRUE(vit.ok()) << vit.status();
  EXPECT_EQ(vit->crop_pct, 0.9);
  EXPECT_EQ(vit->interpolation, "bicubic");
  EXPECT_EQ(vit->mean, (std::vector<double>{0.5, 0.5, 0.5}));
  EXPECT_EQ(vit->eval_resize, 248);
  absl::StatusOr<DataPipeline> swin = ResolveDataPipeline(Parse("", "swinv2_tiny_window8_256"));
  ASSERT_TRUE(swin.ok()) << swin.status();
  EXPECT_EQ(swin->mean, (std::vector<double>{0.485, 0.456, 0.406}));
  EXPECT_EQ(swin->std, (std::vector<double>{0.229, 0.224, 0.225}));
  EXPECT_EQ(swin->eval_resize, 284);  // floor(256 / 0.9)
}

TEST(DataPipelineTest, DescribesThePaperPipeline) {
  absl::StatusOr<DataPipeline> p =
      ResolveDataPipeline(Parse(", hflip: 0.5, auto_augment: rand-m15-n2-p1-mstd0, re_prob: 0.25"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(DescribeDataPipeline(*p),
            "train (timm create_transform, is_training=True):\n"
            "  RandomResizedCrop(224x224, scale=(0.08, 1), ratio=(0.75, 1.33333), interpolation=random)\n"
            "  RandomHorizontalFlip(p=0.5)\n"
            "  RandAugment(m=15, n=2, mstd=0, mmax=10, inc=0, p=1)\n"
            "  Normalize(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))\n"
            "  RandomErasing(p=0.25, mode=pixel, count=1..1)\n"
            "eval (timm create_transform, is_training=False):\n"
            "  Resize(shorter side 248 = floor(224 / crop_pct 0.9), interpolation=bicubic)\n"
            "  CenterCrop(224x224)\n"
            "  Normalize(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))\n");
  // Without aa, timm's ColorJitter (train.py's 0.4).
  p = ResolveDataPipeline(Parse(""));
  ASSERT_TRUE(p.ok());
  EXPECT_NE(DescribeDataPipeline(*p).find("ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4, hue=0)"),
            std::string::npos);
}

// Fixed-size datasets are read as stored: no timm transform is described, since none runs.
TEST(DataPipelineTest, FixedSizeDatasetsAreDescribedAsStored) {
  absl::StatusOr<ExperimentConfig> c = ParseExperimentYaml(
      "{model: {name: vit_nano_patch7_28}, data: {dataset: fashion_mnist, random_crop_padding: 2, hflip: "
      "0.5}}",
      "spec.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<DataPipeline> p = ResolveDataPipeline(*c);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(DescribeDataPipeline(*p),
            "train (images as stored):\n"
            "  RandomCrop(padding=2)\n"
            "  RandomHorizontalFlip(p=0.5)\n"
            "  Normalize(mean=(0.286), std=(0.353))\n"
            "eval (images as stored):\n"
            "  Normalize(mean=(0.286), std=(0.353))\n");
}

}  // namespace
}  // namespace nmsparse
