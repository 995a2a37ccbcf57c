// timm's RandAugment against timm itself: testdata/timm_randaugment.txt is printed by
// tools/timm_randaugment_golden.py (timm 1.0.31, Pillow 13) and holds each op's output on fixed images and
// each level function's argument. Also the config grammar and the policy's draw statistics.
#include "worker/trainer/data/randaugment/rand_augment.h"

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/trainer/data/randaugment/pil_affine.h"
#include "schemas/rand_augment_config.h"
#include "worker/trainer/data/randaugment/rand_augment_ops.h"

namespace nmsparse {
namespace {

constexpr char kGolden[] = "worker/trainer/data/randaugment/testdata/timm_randaugment.txt";

struct Golden {
  std::map<std::string, Image> images;
  pil::Fill fill{};
  std::vector<std::string> op_lines;
  std::vector<std::string> level_lines;
};

Image Decode(int width, int height, const std::string& base64) {
  std::string bytes;
  EXPECT_TRUE(absl::Base64Unescape(base64, &bytes));
  Image image;
  image.width = width;
  image.height = height;
  image.pixels.assign(bytes.begin(), bytes.end());
  EXPECT_EQ(image.numel(), static_cast<int64_t>(image.pixels.size()));
  return image;
}

const Golden& LoadGolden() {
  static const Golden* golden = [] {
    auto* g = new Golden;
    std::ifstream in(kGolden);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string kind;
      fields >> kind;
      if (kind == "image") {
        std::string name, data;
        int w = 0, h = 0;
        fields >> name >> w >> h >> data;
        g->images[name] = Decode(w, h, data);
      } else if (kind == "fill") {
        int r, gr, b;
        fields >> r >> gr >> b;
        g->fill = {static_cast<uint8_t>(r), static_cast<uint8_t>(gr), static_cast<uint8_t>(b)};
      } else if (kind == "op") {
        g->op_lines.push_back(line);
      } else if (kind == "level") {
        g->level_lines.push_back(line);
      }
    }
    return g;
  }();
  return *golden;
}

std::map<std::string, RandAugmentOp> OpsByName() {
  std::map<std::string, RandAugmentOp> ops;
  for (int i = 0; i <= static_cast<int>(RandAugmentOp::kTranslateYRel); ++i) {
    auto op = static_cast<RandAugmentOp>(i);
    ops[std::string(RandAugmentOpName(op))] = op;
  }
  return ops;
}

pil::Resample ResampleByName(const std::string& name) {
  if (name == "bilinear") return pil::Resample::kBilinear;
  if (name == "bicubic") return pil::Resample::kBicubic;
  return pil::Resample::kNearest;
}

// Every op reproduces Pillow's arithmetic step for step (LUTs, single-precision blends and filter,
// Geometry.c's sampling in double with the same truncations), so each output byte must equal timm's:
// tolerance 0.
TEST(RandAugmentOpsTest, EachOpEqualsTimmByteForByte) {
  const Golden& golden = LoadGolden();
  ASSERT_EQ(golden.images.size(), 4u) << kGolden << " missing or unreadable";
  ASSERT_GE(golden.op_lines.size(), 50u);
  const auto ops = OpsByName();
  for (const std::string& line : golden.op_lines) {
    std::istringstream fields(line);
    std::string kind, name, image_name, interp, data;
    double arg = 0;
    fields >> kind >> name >> image_name >> interp >> arg >> data;
    ASSERT_TRUE(ops.count(name)) << line.substr(0, 60);
    Image image = golden.images.at(image_name);
    ApplyRandAugmentOp(ops.at(name), arg, ResampleByName(interp), golden.fill, image);
    const Image want = Decode(image.width, image.height, data);
    int differ = 0, worst = 0;
    for (size_t i = 0; i < want.pixels.size(); ++i) {
      const int d = std::abs(int(image.pixels[i]) - int(want.pixels[i]));
      differ += d != 0;
      worst = std::max(worst, d);
    }
    EXPECT_EQ(differ, 0) << name << "(" << image_name << ", " << arg << ", " << interp << "): " << differ
                         << " bytes differ, worst by " << worst;
  }
}

// The same double arithmetic as timm's level functions in the same order: equal to the last bit.
TEST(RandAugmentOpsTest, LevelToArgEqualsTimm) {
  const Golden& golden = LoadGolden();
  ASSERT_GE(golden.level_lines.size(), 100u);
  const auto ops = OpsByName();
  for (const std::string& line : golden.level_lines) {
    std::istringstream fields(line);
    std::string kind, name;
    double magnitude = 0, want = 0;
    fields >> kind >> name >> magnitude >> want;
    ASSERT_TRUE(ops.count(name)) << line;
    EXPECT_EQ(RandAugmentArg(ops.at(name), magnitude, false), want) << line;
  }
  EXPECT_EQ(RandAugmentArg(RandAugmentOp::kRotate, 10, true), -30.0);
  EXPECT_EQ(RandAugmentArg(RandAugmentOp::kContrastIncreasing, 10, true), 0.1);  // max(0.1, 1 - 0.9)
}

TEST(RandAugmentConfigTest, ParsesThePapersString) {
  auto config = ParseRandAugmentConfig("rand-m15-n2-p1-mstd0");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->magnitude, 15);
  EXPECT_EQ(config->num_layers, 2);
  EXPECT_EQ(config->prob, 1.0);
  EXPECT_EQ(config->magnitude_std, 0.0);
  EXPECT_EQ(config->UpperBound(), 10.0);  // m15 is clipped to timm's 10 without mmax.
  EXPECT_FALSE(config->increasing);
}

TEST(RandAugmentConfigTest, ParsesEverySection) {
  auto config = ParseRandAugmentConfig("rand-m9-n3-mstd0.5-mmax20-inc1-p0.7-tweights");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->magnitude, 9);
  EXPECT_EQ(config->num_layers, 3);
  EXPECT_EQ(config->magnitude_std, 0.5);
  EXPECT_EQ(config->UpperBound(), 20.0);
  EXPECT_TRUE(config->increasing);
  EXPECT_EQ(config->prob, 0.7);
  EXPECT_EQ(config->op_set, RandAugmentOpSet::kWeighted);
  // timm's defaults, mstd > 100 as uniform, setdefault's first-wins for mstd and mmax, last-wins elsewhere.
  auto defaults = ParseRandAugmentConfig("rand");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->magnitude, 10);
  EXPECT_EQ(defaults->num_layers, 2);
  EXPECT_EQ(defaults->prob, 0.5);
  EXPECT_TRUE(ParseRandAugmentConfig("rand-mstd101")->uniform_magnitude());
  EXPECT_FALSE(ParseRandAugmentConfig("rand-mstd100")->uniform_magnitude());
  EXPECT_EQ(ParseRandAugmentConfig("rand-mstd1-mstd2")->magnitude_std, 1.0);
  EXPECT_EQ(ParseRandAugmentConfig("rand-mmax0")->UpperBound(), 10.0);  // timm: `magnitude_max or 10`.
  EXPECT_EQ(ParseRandAugmentConfig("rand-m3-m7")->magnitude, 7);
}

TEST(RandAugmentConfigTest, ErrorsNameTheBadSection) {
  struct Case {
    const char* config;
    const char* names;
  };
  for (const Case& c :
       {Case{"auto-m9", "must start with 'rand-'"}, Case{"rand-m9-x3", "'x3' is unknown"},
        Case{"rand-m9.5", "'m9.5' has a value '9.5'"}, Case{"rand-mstdinf", "'mstdinf' has no number"},
        Case{"rand-m9--n2", "'' has no number"}, Case{"rand-tfoo", "'tfoo' names no op set"},
        Case{"rand-p0.5x", "'p0.5x'"}, Case{"rand-n17", "'n17' asks for more than 16"},
        Case{"rand-m-5", "'m' has no number"}, Case{"rand-n16-tweights", "n > 15"}}) {
    auto config = ParseRandAugmentConfig(c.config);
    ASSERT_FALSE(config.ok()) << c.config;
    EXPECT_THAT(std::string(config.status().message()), testing::HasSubstr(c.names)) << c.config;
  }
  EXPECT_EQ(ParseRandAugmentConfig("rand-t3a").status().code(), absl::StatusCode::kUnimplemented);
}

TEST(RandAugmentTest, FillIsTimmsRoundedMean) {
  EXPECT_EQ(RandAugmentFill({0.485, 0.456, 0.406}), (pil::Fill{124, 116, 104}));
  EXPECT_EQ(RandAugmentFill({0.5, 0.5, 0.5}), (pil::Fill{128, 128, 128}));  // 127.5 rounds half to even.
}

RandAugment Make(const std::string& text, std::optional<pil::Resample> interpolation = std::nullopt) {
  auto config = ParseRandAugmentConfig(text);
  EXPECT_TRUE(config.ok()) << config.status();
  return RandAugment(*config, {124, 116, 104}, interpolation);
}

TEST(RandAugmentTest, DescribesItself) {
  EXPECT_EQ(Make("rand-m15-n2-p1-mstd0").Describe(),
            "RandAugment n=2 m=15 mstd=0 mmax=10 p=1 fill=(124,116,104) interpolation=random (bilinear or "
            "bicubic) ops=AutoContrast,Equalize,Invert,Rotate,Posterize,Solarize,SolarizeAdd,Color,Contrast,"
            "Brightness,Sharpness,ShearX,ShearY,TranslateXRel,TranslateYRel");
  EXPECT_THAT(Make("rand-m9-inc1-mstd101", pil::Resample::kBilinear).Describe(),
              testing::AllOf(testing::HasSubstr("mstd=inf"), testing::HasSubstr("interpolation=bilinear"),
                             testing::HasSubstr("PosterizeIncreasing")));
}

// Draw statistics over many images, each bound five standard errors wide so that a correct policy fails
// about once in 10^6 runs while a wrong probability, set or noise fails by far.
TEST(RandAugmentTest, DrawsOpsUniformlyWithReplacementAtProbabilityP) {
  const RandAugment ra = Make("rand-m5-n2-p0.3-mstd1");
  ImageRng rng(7);
  const int images = 30000;
  std::map<RandAugmentOp, int> counts;
  int applied = 0, same = 0, negated = 0, signed_ops = 0, bilinear = 0, geometric = 0;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < images; ++i) {
    const auto draws = ra.Draw(rng);
    ASSERT_EQ(draws.size(), 2u);
    same += draws[0].op == draws[1].op;
    for (const RandAugmentDraw& d : draws) {
      ++counts[d.op];
      if (!d.applied) continue;
      ++applied;
      sum += d.magnitude;
      sum2 += d.magnitude * d.magnitude;
      if (d.op == RandAugmentOp::kRotate) {
        ++signed_ops;
        negated += d.arg < 0;
      }
      if (IsGeometricRandAugmentOp(d.op)) {
        ++geometric;
        bilinear += d.resample == pil::Resample::kBilinear;
      }
    }
  }
  const double n = 2.0 * images;
  ASSERT_EQ(counts.size(), 15u);
  for (const auto& [op, count] : counts) {
    EXPECT_NEAR(count / n, 1.0 / 15, 5 * std::sqrt((1.0 / 15) * (14.0 / 15) / n)) << RandAugmentOpName(op);
  }
  EXPECT_NEAR(same / double(images), 1.0 / 15, 5 * std::sqrt((1.0 / 15) / images));  // with replacement
  EXPECT_NEAR(applied / n, 0.3, 5 * std::sqrt(0.21 / n));
  const double mean = sum / applied;
  EXPECT_NEAR(mean, 5.0, 5 * 1.0 / std::sqrt(applied));  // m5 +- 1 is almost never clipped at 0 or 10.
  EXPECT_NEAR(std::sqrt(sum2 / applied - mean * mean), 1.0, 0.03);
  EXPECT_NEAR(negated / double(signed_ops), 0.5, 5 * 0.5 / std::sqrt(signed_ops));
  EXPECT_NEAR(bilinear / double(geometric), 0.5, 5 * 0.5 / std::sqrt(geometric));
}

TEST(RandAugmentTest, MagnitudeNoiseClipsAndUniformSpansZeroToM) {
  ImageRng rng(11);
  const RandAugment fixed = Make("rand-m15-n1-p1-mstd0");
  const RandAugment uniform = Make("rand-m8-n1-p1-mstd200");
  const RandAugment wide = Make("rand-m15-n1-p1-mstd0-mmax20", pil::Resample::kBicubic);
  double sum = 0;
  const int images = 20000;
  for (int i = 0; i < images; ++i) {
    EXPECT_EQ(fixed.Draw(rng)[0].magnitude, 10.0);
    const auto wide_draw = wide.Draw(rng)[0];
    EXPECT_EQ(wide_draw.magnitude, 15.0);
    if (IsGeometricRandAugmentOp(wide_draw.op)) {
      EXPECT_EQ(wide_draw.resample, pil::Resample::kBicubic);
    }
    const double m = uniform.Draw(rng)[0].magnitude;
    ASSERT_GE(m, 0.0);
    ASSERT_LE(m, 8.0);
    sum += m;
  }
  EXPECT_NEAR(sum / images, 4.0, 5 * (8.0 / std::sqrt(12.0)) / std::sqrt(images));
}

TEST(RandAugmentTest, WeightedSetDrawsByWeightWithoutReplacement) {
  const RandAugment ra = Make("rand-n2-tweights");
  ImageRng rng(3);
  const int images = 40000;
  int rotate_first = 0;
  for (int i = 0; i < images; ++i) {
    const auto draws = ra.Draw(rng);
    ASSERT_NE(draws[0].op, draws[1].op);
    rotate_first += draws[0].op == RandAugmentOp::kRotate;
  }
  const double p = 3.0 / 10.1;  // Rotate's weight over _RAND_WEIGHTED_0's sum.
  EXPECT_NEAR(rotate_first / double(images), p, 5 * std::sqrt(p * (1 - p) / images));
}

Image TestImage() {
  const Golden& golden = LoadGolden();
  return golden.images.at("full");
}

TEST(RandAugmentTest, SameSeedSameImage) {
  const RandAugment ra = Make("rand-m9-n3-mstd0.5-p0.8");
  int changed = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Image a = TestImage(), b = TestImage(), c = TestImage();
    ImageRng ra_rng(seed), rb_rng(seed), rc_rng(seed + 1000);
    ra.Apply(a, ra_rng);
    ra.Apply(b, rb_rng);
    ra.Apply(c, rc_rng);
    EXPECT_EQ(a.pixels, b.pixels) << seed;
    EXPECT_EQ(a.width, TestImage().width);
    changed += a.pixels != c.pixels;
  }
  EXPECT_GE(changed, 15);
}

}  // namespace
}  // namespace nmsparse
