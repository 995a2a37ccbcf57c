#include "worker/sparsity/semi_structured/transposable_mask.h"

#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

namespace nmsparse {
namespace {

// The 6 ways to keep 2 of 4, as bit sets, and their two columns.
constexpr std::array<int, 6> kRowChoices = {0b0011, 0b0101, 0b0110, 0b1001, 0b1010, 0b1100};
constexpr std::array<int64_t, 6> kFirstColumn = {0, 0, 1, 0, 1, 2};
constexpr std::array<int64_t, 6> kSecondColumn = {1, 2, 2, 3, 3, 3};

// Pattern p's entry e = 4 r + c (row-major in its tile).
int PatternBit(const std::array<int, 4>& choice, int e) {
  return (kRowChoices[choice[e / 4]] >> (e % 4)) & 1;
}

// The valid patterns as the choice (an index into kRowChoices) of each of the 4 rows, in `order`.
std::vector<std::array<int, 4>> EnumerateChoices(TransposableOrder order) {
  std::vector<std::array<int, 4>> valid;
  for (int a = 0; a < 6; ++a) {
    for (int b = 0; b < 6; ++b) {
      for (int c = 0; c < 6; ++c) {
        for (int d = 0; d < 6; ++d) {
          const std::array<int, 4> rows = {a, b, c, d};
          bool columns_two = true;
          for (int col = 0; col < 4; ++col) {
            int kept = 0;
            for (int r : rows) kept += (kRowChoices[r] >> col) & 1;
            columns_two = columns_two && kept == 2;
          }
          if (columns_two) valid.push_back(rows);
        }
      }
    }
  }
  if (order == TransposableOrder::kAuthors) {
    // Descending lexicographic on the 16 entries (the patterns are distinct, so the order is total).
    std::sort(valid.begin(), valid.end(), [](const std::array<int, 4>& a, const std::array<int, 4>& b) {
      for (int e = 0; e < 16; ++e) {
        if (PatternBit(a, e) != PatternBit(b, e)) return PatternBit(a, e) > PatternBit(b, e);
      }
      return false;
    });
  }
  return valid;
}

// Everything the mask needs on one device, made once.
struct Tables {
  torch::Tensor patterns;       // [90, 16] fp32.
  torch::Tensor first, second;  // [6] int64: the columns of each row choice.
  torch::Tensor row_choice;     // [4, 90] int64: pattern p keeps row choice row_choice[r][p] - 6 r in row r.
};

Tables CpuTables(TransposableOrder order) {
  const std::vector<std::array<int, 4>> choices = EnumerateChoices(order);
  const int64_t count = static_cast<int64_t>(choices.size());
  Tables t;
  t.patterns = torch::zeros({count, 16}, torch::kFloat32);
  t.row_choice = torch::empty({4, count}, torch::kInt64);
  auto patterns = t.patterns.accessor<float, 2>();
  auto row_choice = t.row_choice.accessor<int64_t, 2>();
  for (int64_t p = 0; p < count; ++p) {
    for (int r = 0; r < 4; ++r) {
      row_choice[r][p] = 6 * r + choices[p][r];
      for (int col = 0; col < 4; ++col) patterns[p][4 * r + col] = PatternBit(choices[p], 4 * r + col);
    }
  }
  t.first = torch::tensor(std::vector<int64_t>(kFirstColumn.begin(), kFirstColumn.end()), torch::kInt64);
  t.second = torch::tensor(std::vector<int64_t>(kSecondColumn.begin(), kSecondColumn.end()), torch::kInt64);
  return t;
}

Tables TablesOn(const torch::Device& device, TransposableOrder order) {
  static std::mutex mutex;
  // Never destroyed: used until exit.
  static auto* tables = new std::map<std::tuple<int, int, TransposableOrder>, Tables>;
  const std::tuple<int, int, TransposableOrder> key{static_cast<int>(device.type()),
                                                    device.has_index() ? device.index() : -1, order};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = tables->find(key);
  if (it == tables->end()) {
    const Tables cpu = CpuTables(order);
    it = tables
             ->emplace(key, Tables{cpu.patterns.to(device), cpu.first.to(device), cpu.second.to(device),
                                   cpu.row_choice.to(device)})
             .first;
  }
  return it->second;
}

}  // namespace

torch::Tensor TransposableTwoFourPatterns(TransposableOrder order) { return CpuTables(order).patterns; }

void PrepareTransposableMask(const torch::Device& device) {
  TablesOn(device, TransposableOrder::kEnumeration);
  TablesOn(device, TransposableOrder::kAuthors);
}

torch::Tensor TransposableTwoFourMask(const torch::Tensor& weight, TransposableOrder order) {
  TORCH_CHECK(weight.dim() == 2 && weight.size(0) % 4 == 0 && weight.size(1) % 4 == 0,
              "TransposableTwoFourMask: weight ", weight.sizes(), " is not [4a, 4b]");
  torch::NoGradGuard no_grad;
  const Tables t = TablesOn(weight.device(), order);
  const int64_t out = weight.size(0), in = weight.size(1);
  // [out/4, 4, in/4, 4] -> tiles [out/4 * in/4, 4 rows, 4 columns] in row-major tile order.
  const torch::Tensor tiles = weight.detach()
                                  .abs()
                                  .to(torch::kFloat32)
                                  .view({out / 4, 4, in / 4, 4})
                                  .permute({0, 2, 1, 3})
                                  .reshape({-1, 4, 4});
  // Each row's 6 pair sums [tiles, 24], then each pattern's ((row 0 + row 1) + row 2) + row 3.
  const torch::Tensor pairs =
      (tiles.index_select(2, t.first) + tiles.index_select(2, t.second)).view({-1, 24});
  torch::Tensor scores = pairs.index_select(1, t.row_choice[0]) + pairs.index_select(1, t.row_choice[1]);
  scores.add_(pairs.index_select(1, t.row_choice[2])).add_(pairs.index_select(1, t.row_choice[3]));
  const torch::Tensor best = scores.argmax(1);  // The first maximum.
  return t.patterns.index_select(0, best)
      .view({out / 4, in / 4, 4, 4})
      .permute({0, 2, 1, 3})
      .reshape({out, in});
}

}  // namespace nmsparse
