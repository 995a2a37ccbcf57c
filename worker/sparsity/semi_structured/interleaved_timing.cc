#include "worker/sparsity/semi_structured/interleaved_timing.h"

#include <algorithm>
#include <vector>

namespace nmsparse {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

}  // namespace

GemmTiming TimeInterleaved(const std::function<double(TimedSide)>& time_block,
                           const InterleavedTimingOptions& options) {
  for (int i = 0; i < options.warmup_blocks; ++i) {
    time_block(i % 2 == 0 ? TimedSide::kDense : TimedSide::kSparse);
    time_block(i % 2 == 0 ? TimedSide::kSparse : TimedSide::kDense);
  }
  std::vector<double> dense, sparse;
  for (int round = 0; round < std::max(1, options.rounds); ++round) {
    const bool dense_first = round % 2 == 0;
    const double first = time_block(dense_first ? TimedSide::kDense : TimedSide::kSparse);
    const double second = time_block(dense_first ? TimedSide::kSparse : TimedSide::kDense);
    dense.push_back(dense_first ? first : second);
    sparse.push_back(dense_first ? second : first);
  }
  return {Median(dense), Median(sparse)};
}

}  // namespace nmsparse
