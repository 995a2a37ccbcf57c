// model.initial_checkpoint against timm itself (tools/timm_swinv2_import_golden.py): a SwinV2 that timm saved
// with save_for_hf with 3 input channels, loaded through the trainer's own path into the catalogue's
// swinv2_micro_window7_28 with 3, 1 and 4 channels, gives the logits timm computed after its own
// load_pretrained (which adapts patch_embed.proj.weight with adapt_input_conv), and the adapted weight
// itself; likewise into a model with patches of 4 on a twice larger image (timm's resample_patch_embed).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "schemas/model_catalog.h"
#include "worker/trainer/interop/initial_weights.h"
#include "worker/trainer/models/model_factory.h"

namespace nmsparse {
namespace {

constexpr char kFolder[] = "worker/trainer/interop/testdata/timm_swinv2_import";
constexpr char kGolden[] = "worker/trainer/interop/testdata/timm_swinv2_import.txt";

// One loading model of the golden: its channels, image and patch size, timm's adapted patch_embed.proj.weight
// checksums {L1, sum, sin-weighted sum}, the input's shape and timm's logits per image.
struct ImportCase {
  int in_chans = 0, img_size = 0, patch_size = 0;
  std::vector<double> patch_embed;
  std::vector<int64_t> input_shape;
  std::vector<std::vector<double>> logits;
};

// The numbers of a golden line's values, separated by spaces or commas.
std::vector<double> Numbers(std::string text) {
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream in(text);
  std::vector<double> values{std::istream_iterator<double>(in), std::istream_iterator<double>()};
  EXPECT_TRUE(in.eof()) << text;  // Every word read as a number.
  return values;
}

std::vector<ImportCase> ReadGolden() {
  std::ifstream in(kGolden);
  EXPECT_TRUE(in) << kGolden;
  std::vector<ImportCase> cases;
  for (std::string line; std::getline(in, line);) {
    const std::pair<std::string, std::string> word = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    if (word.first == "load") {  // "in_chans C img_size S patch_size P"
      const std::vector<std::string> kv = absl::StrSplit(word.second, ' ');
      EXPECT_EQ(kv.size(), 6u) << line;
      ImportCase& c = cases.emplace_back();
      EXPECT_TRUE(absl::SimpleAtoi(kv.at(1), &c.in_chans) && absl::SimpleAtoi(kv.at(3), &c.img_size) &&
                  absl::SimpleAtoi(kv.at(5), &c.patch_size))
          << line;
    } else if (word.first == "patch_embed") {
      cases.back().patch_embed = Numbers(word.second);
    } else if (word.first == "input") {
      for (double d : Numbers(word.second)) cases.back().input_shape.push_back(static_cast<int64_t>(d));
    } else if (word.first == "logits") {
      cases.back().logits.push_back(Numbers(word.second));
    }
  }
  return cases;
}

// The golden's input: element k is sin(0.11k), computed in float64 and rounded to float32 as timm's was.
torch::Tensor Images(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return torch::sin(0.11 * torch::arange(n, torch::kFloat64)).view(shape).to(torch::kFloat32);
}

// Tolerances. The adapted weight: each element is one source element, a sum of 3 or a product by 3/4 in
// float32, off by at most 2u (u = 2^-24) of its magnitude; the resampled one a sum of 4 products with the
// pseudo-inverse of a 16x4 resize matrix, computed by SVD in float32 (LAPACK's and torch's may differ) with
// an error of about n * u * cond = 16 * 6e-8 * 1.16 ~ 1e-6 relative: so 1e-5 * L1 on each checksum. The
// logits: both sides run the same float32 function with other
// summation orders (LibTorch's GEMMs, timm's); a dot product of K terms is off by at most K*u*sum|a_i*b_i|,
// K <= 256 here (stage 2's MLP hidden width), and about 26 such stages chain (patch embedding, per block
// q/k/v, q.k, attention.v, projection, fc1, fc2, patch merging, the head) with LayerNorms keeping
// activations O(1): 26 * 256 * 6e-8 ~ 4e-4 relative to the logits' scale. An adaptation that averages
// instead of summing, or repeats without scaling, moves these logits by 2e-3.
constexpr double kWeightTolerance = 1e-5;
constexpr double kLogitTolerance = 4e-4;

TEST(TimmImportTest, SwinV2SavedByTimmGivesTimmsLogitsWithItsInputChannelsAdapted) {
  const std::vector<ImportCase> cases = ReadGolden();
  ASSERT_EQ(cases.size(), 4u);
  for (const ImportCase& c : cases) {
    SCOPED_TRACE(
        absl::StrCat("in_chans ", c.in_chans, " img_size ", c.img_size, " patch_size ", c.patch_size));
    absl::StatusOr<ModelArch> arch = LookupModel("swinv2_micro_window7_28", c.img_size, c.in_chans, 0);
    ASSERT_TRUE(arch.ok()) << arch.status();
    arch->patch_size = c.patch_size;  // The spec's model_kwargs.patch_size, here set directly.
    auto model = CreateModel(*arch);
    std::ostringstream log;
    LoadInitialWeights(kFolder, *arch, *model, log);
    if (c.in_chans == 3 && c.patch_size == 2) {
      EXPECT_EQ(log.str(), "");  // timm's names and shapes are the model's.
    }
    if (c.in_chans != 3) {
      EXPECT_NE(log.str().find(absl::StrCat("adapted from 3 to ", c.in_chans, " input channel(s)")),
                std::string::npos)
          << log.str();
    }
    if (c.patch_size != 2) {
      EXPECT_NE(log.str().find(absl::StrCat("resampled to ", c.patch_size, "x", c.patch_size, " patches")),
                std::string::npos)
          << log.str();
    }
    model->eval();
    torch::NoGradGuard no_grad;
    const torch::Tensor w =
        model->named_parameters()["patch_embed.proj.weight"].to(torch::kFloat64).flatten();
    const torch::Tensor sines = torch::sin(0.05 * torch::arange(w.numel(), torch::kFloat64));
    ASSERT_EQ(c.patch_embed.size(), 3u);
    const double l1 = w.abs().sum().item<double>();
    EXPECT_NEAR(l1, c.patch_embed[0], kWeightTolerance * c.patch_embed[0]);
    EXPECT_NEAR(w.sum().item<double>(), c.patch_embed[1], kWeightTolerance * c.patch_embed[0]);
    EXPECT_NEAR((w * sines).sum().item<double>(), c.patch_embed[2], kWeightTolerance * c.patch_embed[0]);

    const torch::Tensor logits = model->forward(Images(c.input_shape)).to(torch::kFloat64);
    ASSERT_EQ(logits.size(0), static_cast<int64_t>(c.logits.size()));
    const double scale = 1.0 + logits.abs().max().item<double>();
    for (size_t b = 0; b < c.logits.size(); ++b) {
      ASSERT_EQ(logits.size(1), static_cast<int64_t>(c.logits[b].size()));
      for (size_t j = 0; j < c.logits[b].size(); ++j) {
        EXPECT_NEAR(logits[b][j].item<double>(), c.logits[b][j], kLogitTolerance * scale)
            << "image " << b << " class " << j;
      }
    }
  }
}

}  // namespace
}  // namespace nmsparse
