// The JPEG decoder: exact against Pillow's decode (the golden file printed by tools/pillow_jpeg_golden.py
// from JPEGs Pillow made), sizes of scaled decodes, and a message naming the file for each kind of bad JPEG.
#include "worker/trainer/data/jpeg_decoder.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/escaping.h"
#include "worker/trainer/data/image_testing.h"
#include "worker/trainer/data/jpeg_image_source.h"

namespace nmsparse {
namespace {

constexpr char kGolden[] = "worker/trainer/data/testdata/pillow_jpeg_decode.txt";

absl::StatusOr<Image> Decode(const std::string& jpeg, int denominator = 1,
                             const std::string& name = "t.JPEG") {
  return DecodeJpeg(reinterpret_cast<const uint8_t*>(jpeg.data()), jpeg.size(), name, denominator);
}

TEST(JpegDecoderTest, EqualsPillowExactlyAtFullScale) {
  std::ifstream in(kGolden);
  ASSERT_TRUE(in.good()) << kGolden << " missing";
  int cases = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string name, base64, hex, jpeg;
    int width = 0, height = 0;
    fields >> name >> width >> height >> base64 >> hex;
    ASSERT_TRUE(absl::Base64Unescape(base64, &jpeg)) << name;
    const std::string pillow = absl::HexStringToBytes(hex);
    auto image = Decode(jpeg, 1, name);
    ASSERT_TRUE(image.ok()) << name << ": " << image.status();
    ASSERT_EQ(image->width, width) << name;
    ASSERT_EQ(image->height, height) << name;
    ASSERT_EQ(image->channels, 3) << name;
    ASSERT_EQ(image->pixels.size(), pillow.size()) << name;
    int differing = 0, first = -1;
    for (size_t i = 0; i < pillow.size(); ++i) {
      if (image->pixels[i] != static_cast<uint8_t>(pillow[i])) {
        if (differing++ == 0) first = static_cast<int>(i);
      }
    }
    EXPECT_EQ(differing, 0) << name << ": " << differing << " bytes differ from Pillow's, the first at byte "
                            << first << " (" << int(image->pixels[first]) << " vs "
                            << int(static_cast<uint8_t>(pillow[first])) << ")";
    ++cases;
  }
  EXPECT_EQ(cases, 8);
}

TEST(JpegDecoderTest, HeaderGivesTheSizeWithoutDecodingTheScan) {
  const std::string jpeg = MakeTestJpeg(101, 75);
  // The first 40% holds the headers but not the whole scan: the size reads, the pixels do not.
  const std::string head = jpeg.substr(0, jpeg.size() * 2 / 5);
  auto header = ReadJpegHeader(reinterpret_cast<const uint8_t*>(head.data()), head.size(), "head.JPEG");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->width, 101);
  EXPECT_EQ(header->height, 75);
}

TEST(JpegDecoderTest, ScaledDecodesRoundSidesUpAndAverageTheFullImage) {
  const std::string jpeg = MakeTestJpeg(101, 75);
  auto full = Decode(jpeg, 1);
  ASSERT_TRUE(full.ok()) << full.status();
  const int expected[4][3] = {{1, 101, 75}, {2, 51, 38}, {4, 26, 19}, {8, 13, 10}};
  for (const auto& [denominator, w, h] : expected) {
    auto image = Decode(jpeg, denominator);
    ASSERT_TRUE(image.ok()) << image.status();
    EXPECT_EQ(image->width, w) << denominator;
    EXPECT_EQ(image->height, h) << denominator;
  }
  // Each scale keeps every 8x8 block's DC coefficient, so the image's mean colour stays, up to rounding
  // (0.5) and the clamping of samples the IDCT puts outside [0, 255] (< 0.5 on this texture).
  auto mean = [](const Image& image) {
    double sum = 0;
    for (uint8_t v : image.pixels) sum += v;
    return sum / image.pixels.size();
  };
  // Whole blocks only: 96x72 decodes to whole blocks at every scale.
  const std::string blocks = MakeTestJpeg(96, 72);
  auto reference = Decode(blocks, 1);
  ASSERT_TRUE(reference.ok());
  for (int denominator : {2, 4, 8}) {
    auto image = Decode(blocks, denominator);
    ASSERT_TRUE(image.ok());
    EXPECT_NEAR(mean(*image), mean(*reference), 1.0) << denominator;
  }
}

TEST(JpegDecoderTest, GreyIsReplicatedToRgb) {
  auto image = Decode(MakeTestJpeg(33, 21, TestJpegKind::kGrey));
  ASSERT_TRUE(image.ok()) << image.status();
  ASSERT_EQ(image->channels, 3);
  for (int64_t i = 0; i < image->numel(); i += 3) {
    ASSERT_EQ(image->pixels[i], image->pixels[i + 1]);
    ASSERT_EQ(image->pixels[i], image->pixels[i + 2]);
  }
}

TEST(JpegDecoderTest, CmykDecodesToRgb) {
  auto image = Decode(MakeTestJpeg(30, 20, TestJpegKind::kCmyk));
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->channels, 3);
  EXPECT_EQ(image->width, 30);
  EXPECT_EQ(image->pixels.size(), 30u * 20 * 3);
}

TEST(JpegDecoderTest, ProgressiveDecodesAsItsBaselineTwin) {
  // The same quantised coefficients, coded progressively: the same pixels.
  auto baseline = Decode(MakeTestJpeg(64, 48, TestJpegKind::kRgb420));
  auto progressive = Decode(MakeTestJpeg(64, 48, TestJpegKind::kProgressive));
  ASSERT_TRUE(baseline.ok() && progressive.ok());
  EXPECT_EQ(baseline->pixels, progressive->pixels);
}

TEST(JpegDecoderTest, TruncatedJpegIsDataLossNamingTheFile) {
  const std::string jpeg = MakeTestJpeg(64, 48);
  auto image = Decode(jpeg.substr(0, jpeg.size() * 2 / 3), 1, "n01/cut.JPEG");
  ASSERT_TRUE(absl::IsDataLoss(image.status())) << image.status();
  EXPECT_NE(image.status().message().find("n01/cut.JPEG"), std::string::npos) << image.status();
  EXPECT_NE(image.status().message().find("truncated"), std::string::npos) << image.status();
}

TEST(JpegDecoderTest, CorruptHeaderIsDataLossNamingTheFile) {
  // A frame header (SOF0) giving the image 0 lines.
  std::string jpeg = MakeTestJpeg(64, 48);
  const size_t sof = jpeg.find("\xff\xc0");
  ASSERT_NE(sof, std::string::npos);
  jpeg[sof + 5] = jpeg[sof + 6] = 0;
  auto image = Decode(jpeg, 1, "n01/bad.JPEG");
  ASSERT_TRUE(absl::IsDataLoss(image.status())) << image.status();
  EXPECT_NE(image.status().message().find("n01/bad.JPEG: corrupt"), std::string::npos) << image.status();
  auto header = ReadJpegHeader(reinterpret_cast<const uint8_t*>(jpeg.data()), jpeg.size(), "n01/bad.JPEG");
  EXPECT_TRUE(absl::IsDataLoss(header.status())) << header.status();
  // The thread's decompressor recovers: the next good JPEG decodes.
  EXPECT_TRUE(Decode(MakeTestJpeg(16, 16)).ok());
}

TEST(JpegDecoderTest, PngNamedJpegIsDataLossSayingSo) {
  auto source = JpegImageSource::Open(PngBytes(), "n01/image.JPEG");
  ASSERT_TRUE(absl::IsDataLoss(source.status())) << source.status();
  EXPECT_EQ(source.status().message(), "n01/image.JPEG: a PNG image, not a JPEG");
  EXPECT_TRUE(absl::IsDataLoss(Decode("", 1).status()));
  EXPECT_TRUE(absl::IsDataLoss(Decode("GIF89a....", 1).status()));
}

TEST(JpegDecoderTest, SourceReadsTheSizeAndDecodesOnRequest) {
  auto source = JpegImageSource::Open(MakeTestJpeg(40, 30), "a.jpg");
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->width(), 40);
  EXPECT_EQ((*source)->height(), 30);
  auto quarter = (*source)->Decode(4);
  ASSERT_TRUE(quarter.ok());
  EXPECT_EQ(quarter->width, 10);
  EXPECT_TRUE(absl::IsInvalidArgument((*source)->Decode(3).status()));
}

}  // namespace
}  // namespace nmsparse
