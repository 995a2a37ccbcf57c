#include "worker/sparsity/semi_structured/transposable_mask.h"

#include <torch/torch.h>

#include <array>
#include <vector>

namespace nmsparse {
namespace {

// The 6 ways to keep 2 of 4, as bit sets.
constexpr std::array<int, 6> kRowChoices = {0b0011, 0b0101, 0b0110, 0b1001, 0b1010, 0b1100};

std::vector<float> EnumeratePatterns() {
  std::vector<float> patterns;
  for (int a : kRowChoices) {
    for (int b : kRowChoices) {
      for (int c : kRowChoices) {
        for (int d : kRowChoices) {
          const std::array<int, 4> rows = {a, b, c, d};
          bool columns_two = true;
          for (int col = 0; col < 4; ++col) {
            int kept = 0;
            for (int r : rows) kept += (r >> col) & 1;
            columns_two = columns_two && kept == 2;
          }
          if (!columns_two) continue;
          for (int r : rows) {
            for (int col = 0; col < 4; ++col) patterns.push_back(static_cast<float>((r >> col) & 1));
          }
        }
      }
    }
  }
  return patterns;
}

}  // namespace

torch::Tensor TransposableTwoFourPatterns() {
  static const std::vector<float> patterns = EnumeratePatterns();
  return torch::from_blob(const_cast<float*>(patterns.data()),
                          {static_cast<int64_t>(patterns.size() / 16), 16}, torch::kFloat32)
      .clone();
}

torch::Tensor TransposableTwoFourMask(const torch::Tensor& weight) {
  TORCH_CHECK(weight.dim() == 2 && weight.size(0) % 4 == 0 && weight.size(1) % 4 == 0,
              "TransposableTwoFourMask: weight ", weight.sizes(), " is not [4a, 4b]");
  torch::NoGradGuard no_grad;
  const int64_t out = weight.size(0), in = weight.size(1);
  // [out/4, 4, in/4, 4] -> tiles [out/4 * in/4, 16] in row-major tile order.
  const torch::Tensor tiles = weight.detach()
                                  .abs()
                                  .to(torch::kFloat32)
                                  .view({out / 4, 4, in / 4, 4})
                                  .permute({0, 2, 1, 3})
                                  .reshape({-1, 16});
  const torch::Tensor patterns = TransposableTwoFourPatterns().to(weight.device());
  const torch::Tensor best = tiles.matmul(patterns.t()).argmax(1);
  return patterns.index_select(0, best)
      .view({out / 4, in / 4, 4, 4})
      .permute({0, 2, 1, 3})
      .reshape({out, in});
}

}  // namespace nmsparse
