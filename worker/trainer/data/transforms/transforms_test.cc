// timm's transforms against timm, Pillow and torchvision: testdata/timm_transforms.txt is printed by
// tools/timm_transforms_golden.py from images made by the same formula as TestImage (no files, no download).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/two_sample_ks.h"
#include "gtest/gtest.h"
#include "worker/trainer/data/transforms/color_jitter.h"
#include "worker/trainer/data/transforms/eval_transform.h"
#include "worker/trainer/data/transforms/flip.h"
#include "worker/trainer/data/transforms/interpolation.h"
#include "worker/trainer/data/transforms/normalize.h"
#include "worker/trainer/data/transforms/random_erasing.h"
#include "worker/trainer/data/transforms/random_resized_crop.h"
#include "worker/trainer/data/transforms/resample.h"
#include "worker/trainer/data/transforms/train_transform.h"

namespace nmsparse {
namespace {

constexpr char kGolden[] = "worker/trainer/data/transforms/testdata/timm_transforms.txt";

// The golden script's test_image: smooth ramps whose wrap-around makes sharp edges.
Image TestImage(int w, int h) {
  Image image{w, h, 3, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        image.row(y)[x * 3 + c] =
            static_cast<uint8_t>(((x * x * 3 + y * y * 5 + x * y * (c + 1)) / 16 + 50 * c) & 255);
      }
    }
  }
  return image;
}

// The golden lines whose first word is `kind`, split on spaces.
std::vector<std::vector<std::string>> Golden(const std::string& kind) {
  std::ifstream in(kGolden);
  EXPECT_TRUE(in.good()) << kGolden << " missing";
  std::vector<std::vector<std::string>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> words = absl::StrSplit(line, ' ');
    if (words[0] == kind) out.push_back(std::move(words));
  }
  EXPECT_FALSE(out.empty()) << "no " << kind << " lines in " << kGolden;
  return out;
}

int Int(const std::string& s) {
  int v = 0;
  EXPECT_TRUE(absl::SimpleAtoi(s, &v)) << s;
  return v;
}

double Number(const std::string& s) {
  double v = 0;
  EXPECT_TRUE(absl::SimpleAtod(s, &v)) << s;
  return v;
}

std::vector<uint8_t> Unhex(const std::string& hex) {
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

struct Difference {
  int max = 0;
  double mean = 0;
};

Difference Compare(const Image& ours, const std::vector<uint8_t>& theirs) {
  Difference d;
  EXPECT_EQ(ours.pixels.size(), theirs.size());
  if (ours.pixels.size() != theirs.size() || theirs.empty()) return {999, 999};
  int64_t sum = 0;
  for (size_t i = 0; i < theirs.size(); ++i) {
    const int diff = std::abs(ours.pixels[i] - theirs[i]);
    d.max = std::max(d.max, diff);
    sum += diff;
  }
  d.mean = static_cast<double>(sum) / theirs.size();
  return d;
}

// An image held in memory; Decode(d) reduces it by d with the bilinear resampler when `reduce` (a stand-in
// for a JPEG decoder's DCT scaling), else returns it whole.
class MemorySource : public ImageSource {
 public:
  explicit MemorySource(Image image, bool reduce = false) : image_(std::move(image)), reduce_(reduce) {}
  int width() const override { return image_.width; }
  int height() const override { return image_.height; }
  absl::StatusOr<Image> Decode(int denominator) const override {
    requested_ = denominator;
    if (!reduce_ || denominator == 1) return image_;
    return Resize(image_, (image_.width + denominator - 1) / denominator,
                  (image_.height + denominator - 1) / denominator, Interpolation::kBilinear);
  }
  int requested() const { return requested_; }

 private:
  Image image_;
  bool reduce_;
  mutable int requested_ = 0;
};

// Area fractions and log-aspects (log w/h) of a list of window sizes.
void Shapes(const std::vector<std::pair<int, int>>& sizes, double area, std::vector<double>* areas,
            std::vector<double>* log_aspects) {
  for (auto [w, h] : sizes) {
    areas->push_back(w * static_cast<double>(h) / area);
    log_aspects->push_back(std::log(static_cast<double>(w) / h));
  }
}

std::vector<std::pair<int, int>> Pairs(const std::vector<std::string>& words, size_t from) {
  std::vector<std::pair<int, int>> out;
  for (size_t i = from; i + 1 < words.size(); i += 2) out.emplace_back(Int(words[i]), Int(words[i + 1]));
  return out;
}

// Pillow's resize, crop then resize, all three filters: the goal is at most 1 grey level from Pillow's, and
// the fixed-point arithmetic is Pillow's own, so any difference at all is a bug.
TEST(ResampleTest, MatchesPillow) {
  for (const auto& w : Golden("resize")) {
    SCOPED_TRACE(absl::StrJoin(std::vector<std::string>(w.begin(), w.begin() + 11), " "));
    const Interpolation filter = *ParseInterpolation(w[1]);
    const Image image = TestImage(Int(w[2]), Int(w[3]));
    const PixelBox box{Number(w[4]), Number(w[5]), Number(w[6]), Number(w[7])};
    const Image out = ResizeRegion(image, box, Int(w[8]), Int(w[9]), filter);
    EXPECT_EQ(Compare(out, Unhex(w[10])).max, 0);
  }
}

// The vectorised horizontal pass (where the CPU has one) gives the portable loops' bytes: random images,
// whole and fractional boxes, reductions and enlargements, both filters, spans of odd and even widths. The
// arithmetic is integer on both sides, so the comparison is exact.
TEST(ResampleTest, VectorisedPassGivesThePortableBytes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int w = 2 + static_cast<int>(rng() % 300), h = 2 + static_cast<int>(rng() % 60);
    Image image{w, h, 3, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
    for (uint8_t& v : image.pixels) v = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double x0 = unit(rng) * w * 0.5, x1 = x0 + (w - x0) * (0.05 + 0.95 * unit(rng));
    const PixelBox box{trial % 2 ? std::floor(x0) : x0, 0.0, trial % 2 ? std::ceil(x1) : x1,
                       static_cast<double>(h)};
    const int out_w = 1 + static_cast<int>(rng() % 400), out_h = 1 + static_cast<int>(rng() % 40);
    for (Interpolation filter : {Interpolation::kBilinear, Interpolation::kBicubic}) {
      SCOPED_TRACE(absl::StrCat(w, "x", h, " box ", box.x0, "..", box.x1, " to ", out_w, "x", out_h, " ",
                                filter == Interpolation::kBicubic ? "bicubic" : "bilinear"));
      AllowResampleSimdForTesting(true);
      const Image fast = ResizeRegion(image, box, out_w, out_h, filter);
      AllowResampleSimdForTesting(false);
      const Image portable = ResizeRegion(image, box, out_w, out_h, filter);
      AllowResampleSimdForTesting(true);
      ASSERT_EQ(fast.pixels, portable.pixels);
    }
  }
}

// timm's create_transform(is_training=False) before ToTensor: Resize(floor(size / crop_pct)), CenterCrop.
TEST(EvalTransformTest, MatchesTimm) {
  for (const auto& w : Golden("eval")) {
    SCOPED_TRACE(absl::StrJoin(std::vector<std::string>(w.begin(), w.begin() + 6), " "));
    const EvalTransform transform({Int(w[1]), Number(w[2]), *ParseInterpolation(w[3])});
    const absl::StatusOr<Image> out = transform.Apply(MemorySource(TestImage(Int(w[4]), Int(w[5]))), 0);
    ASSERT_TRUE(out.ok()) << out.status();
    const Difference d = Compare(*out, Unhex(w[6]));
    EXPECT_LE(d.mean, 1.0);
    EXPECT_EQ(d.max, 0);
  }
}

TEST(EvalTransformTest, CentreCropPadsASmallerImage) {
  Image image{2, 1, 1, {7, 9}};
  const Image out = CenterCrop(image, 4);
  // torchvision pads (4 - 2) / 2 = 1 column left, 1 right; (4 - 1) / 2 = 1 row above, 2 below.
  EXPECT_EQ(out.pixels, (std::vector<uint8_t>{0, 0, 0, 0, 0, 7, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

// torchvision's adjust_brightness / contrast / saturation on a PIL image at fixed factors: Pillow's blend in
// float, truncated, so equal to the grey level.
TEST(ColorJitterTest, MatchesTorchvisionAtFixedFactors) {
  for (const auto& w : Golden("jitter")) {
    SCOPED_TRACE(w[1] + " " + w[2]);
    Image image = TestImage(37, 29);
    const float factor = static_cast<float>(Number(w[2]));
    if (w[1] == "brightness") AdjustBrightness(image, factor);
    if (w[1] == "contrast") AdjustContrast(image, factor);
    if (w[1] == "saturation") AdjustSaturation(image, factor);
    EXPECT_EQ(Compare(image, Unhex(w[3])).max, 0);
  }
}

TEST(ColorJitterTest, ZeroStrengthKeepsTheImage) {
  Image image = TestImage(9, 7);
  const Image before = image;
  ImageRng rng(1);
  ColorJitter(0.0).Apply(image, rng);
  EXPECT_EQ(image.pixels, before.pixels);
  ColorJitter(0.4).Apply(image, rng);
  EXPECT_NE(image.pixels, before.pixels);
}

// 10^4 windows of timm's get_params against ours: area fraction and log-aspect, two-sample KS.
TEST(RandomResizedCropTest, WindowDistributionsMatchTimm) {
  for (const auto& w : Golden("rrc")) {
    const int width = Int(w[1]), height = Int(w[2]);
    SCOPED_TRACE(absl::StrCat(width, "x", height));
    RandomResizedCropParams p;
    p.scale_min = Number(w[3]);
    p.scale_max = Number(w[4]);
    p.ratio_min = Number(w[5]);
    p.ratio_max = Number(w[6]);
    const std::vector<std::pair<int, int>> theirs = Pairs(w, 7);
    std::vector<std::pair<int, int>> ours;
    ImageRng rng(23);
    for (size_t i = 0; i < theirs.size(); ++i) {
      const CropWindow c = SampleCropWindow(width, height, p, rng);
      ASSERT_TRUE(c.top >= 0 && c.left >= 0 && c.top + c.height <= height && c.left + c.width <= width);
      ours.emplace_back(c.width, c.height);
    }
    if (theirs.size() < 1000) {  // The fallback: deterministic.
      EXPECT_EQ(ours, theirs);
      continue;
    }
    std::vector<double> area_a, aspect_a, area_b, aspect_b;
    Shapes(ours, static_cast<double>(width) * height, &area_a, &aspect_a);
    Shapes(theirs, static_cast<double>(width) * height, &area_b, &aspect_b);
    EXPECT_GT(KsPValue(area_a, area_b), 0.01);
    EXPECT_GT(KsPValue(aspect_a, aspect_b), 0.01);
  }
}

TEST(RandomResizedCropTest, FallbackIsTheCentredWindowOfTheNearestAspect) {
  RandomResizedCropParams p;
  p.scale_min = 0.5;
  ImageRng rng(5);
  const CropWindow c = SampleCropWindow(500, 100, p, rng);
  EXPECT_EQ(c.width, 133);  // round(100 * 4/3)
  EXPECT_EQ(c.height, 100);
  EXPECT_EQ(c.left, (500 - 133) / 2);
  EXPECT_EQ(c.top, 0);
}

TEST(RandomResizedCropTest, ReducedDecodeKeepsTheWindowAtLeastTheOutput) {
  EXPECT_EQ(ReductionFor({0, 0, 400, 300}, 224, 224), 1);
  EXPECT_EQ(ReductionFor({0, 0, 460, 450}, 224, 224), 2);
  EXPECT_EQ(ReductionFor({0, 0, 1800, 1800}, 224, 224), 8);
  EXPECT_EQ(ReductionFor({0, 0, 1800, 1800}, 100, 100), 8);  // 1/8 at most (JPEG's smallest scale).
  EXPECT_EQ(ReductionFor({0, 0, 1000, 300}, 64, 64), 4);

  // A whole-image window of a smooth image, reduced by 4 before the resize, stays near the exact result.
  Image smooth{512, 512, 3, std::vector<uint8_t>(512 * 512 * 3)};
  for (int y = 0; y < 512; ++y) {
    for (int x = 0; x < 512 * 3; ++x) smooth.row(y)[x] = static_cast<uint8_t>((x / 3 + y) / 4);
  }
  RandomResizedCropParams p;
  p.width = p.height = 64;
  p.scale_min = p.scale_max = 1.0;
  p.ratio_min = p.ratio_max = 1.0;
  p.interpolation = TrainInterpolation::kBilinear;
  MemorySource reducing(smooth, /*reduce=*/true);
  ImageRng rng_a(3), rng_b(3);
  const absl::StatusOr<Image> reduced = RandomResizedCrop(reducing, p, rng_a);
  EXPECT_EQ(reducing.requested(), 8);
  p.reduced_decode = false;
  const absl::StatusOr<Image> exact = RandomResizedCrop(MemorySource(smooth), p, rng_b);
  ASSERT_TRUE(reduced.ok() && exact.ok());
  EXPECT_LE(Compare(*reduced, exact->pixels).max, 1);
}

// 10^4 boxes of timm's RandomErasing (probability 1, one box) against ours: area and log-aspect, KS.
TEST(RandomErasingTest, BoxDistributionsMatchTimm) {
  const auto golden = Golden("erase");
  ASSERT_EQ(golden.size(), 1u);
  const int width = Int(golden[0][1]), height = Int(golden[0][2]);
  const std::vector<std::pair<int, int>> theirs = Pairs(golden[0], 3);
  RandomErasingParams p;
  p.probability = 1.0;
  std::vector<float> chw(3 * static_cast<size_t>(width) * height, 1.0f);
  std::vector<std::pair<int, int>> ours;
  ImageRng rng(7);
  for (size_t i = 0; i < theirs.size(); ++i) {
    for (const ErasedBox& b : RandomErase(p, chw.data(), 3, height, width, rng))
      ours.emplace_back(b.width, b.height);
  }
  std::vector<double> area_a, aspect_a, area_b, aspect_b;
  Shapes(ours, static_cast<double>(width) * height, &area_a, &aspect_a);
  Shapes(theirs, static_cast<double>(width) * height, &area_b, &aspect_b);
  EXPECT_GT(KsPValue(area_a, area_b), 0.01);
  EXPECT_GT(KsPValue(aspect_a, aspect_b), 0.01);
}

TEST(RandomErasingTest, ModesFillTheBox) {
  const int c = 3, h = 40, w = 50;
  for (EraseMode mode : {EraseMode::kConst, EraseMode::kRand, EraseMode::kPixel}) {
    std::vector<float> chw(c * h * w, 9.0f);
    RandomErasingParams p;
    p.probability = 1.0;
    p.mode = mode;
    p.max_count = 3;
    ImageRng rng(11);
    const std::vector<ErasedBox> boxes = RandomErase(p, chw.data(), c, h, w, rng);
    ASSERT_FALSE(boxes.empty());
    const ErasedBox& b = boxes.back();
    const float first = chw[b.top * w + b.left];
    const float second = chw[b.top * w + b.left + 1];
    EXPECT_NE(first, 9.0f);
    if (mode == EraseMode::kConst) {
      EXPECT_EQ(first, 0.0f);
    }
    if (mode == EraseMode::kRand) {
      EXPECT_EQ(first, second);  // One colour per channel.
    }
    if (mode == EraseMode::kPixel) {
      EXPECT_NE(first, second);
    }
  }
  std::vector<float> untouched(c * h * w, 9.0f);
  RandomErasingParams off;
  ImageRng rng(1);
  EXPECT_TRUE(RandomErase(off, untouched.data(), c, h, w, rng).empty());
  EXPECT_FALSE(ParseEraseMode("noise").ok());
}

TEST(NormalizeTest, ToTensorThenNormalizeInFloat) {
  const uint8_t chw[6] = {0, 128, 255, 0, 128, 255};
  float out[6];
  ByteNormalizer({0.5f, 0.25f}, {0.5f, 0.25f}).Apply(chw, 2, 3, out);  // Two planes of three.
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_EQ(out[1], (128.0f / 255.0f - 0.5f) / 0.5f);
  EXPECT_EQ(out[2], 1.0f);
  EXPECT_EQ(out[3], -1.0f);
  EXPECT_EQ(out[4], (128.0f / 255.0f - 0.25f) / 0.25f);
  EXPECT_EQ(out[5], 3.0f);
}

TEST(FlipTest, FlipsRowsOrColumns) {
  Image image{3, 2, 1, {1, 2, 3, 4, 5, 6}};
  FlipHorizontal(image);
  EXPECT_EQ(image.pixels, (std::vector<uint8_t>{3, 2, 1, 6, 5, 4}));
  FlipVertical(image);
  EXPECT_EQ(image.pixels, (std::vector<uint8_t>{6, 5, 4, 3, 2, 1}));
}

TEST(TrainTransformTest, DeterministicPerSeedAndDescribed) {
  RandomResizedCropParams crop;
  crop.width = crop.height = 32;
  TrainTransform transform(crop, FlipAndJitterOps(0.5, 0.0, 0.4), ImageNormalization{},
                           RandomErasingParams{0.25});
  const MemorySource source(TestImage(97, 61));
  const absl::StatusOr<Image> a = transform.Apply(source, 42), b = transform.Apply(source, 42),
                              c = transform.Apply(source, 43);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->width, 32);
  EXPECT_EQ(a->pixels, b->pixels);
  EXPECT_NE(a->pixels, c->pixels);
  EXPECT_EQ(
      transform.Describe(),
      "RandomResizedCrop(32x32, scale=(0.08, 1), ratio=(0.75, 1.33333), interpolation=random, JPEG decoded "
      "at 1/2..1/8 when the crop allows)\n"
      "RandomHorizontalFlip(p=0.5)\n"
      "ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4, hue=0, random order)\n"
      "Normalize(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))\n"
      "RandomErasing(p=0.25, mode=const, count=1..1, area=(0.02, 0.3333), aspect=(0.3, 3.333), on the "
      "normalised image)");
}

}  // namespace
}  // namespace nmsparse
