#include "worker/sparsity/semi_structured/two_four_rule.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nmsparse {

std::string WhyNotTwoFour(const LayerRule* rule) {
  if (rule == nullptr || rule->recipe == Recipe::kDense) return "dense rule";
  if (rule->is_conv) return "convolution";
  if (rule->unstructured) return "unstructured mask";
  if (rule->sparse_dim != SparseDim::kRow) return "mask along out_features (sparse_dim COL)";
  if (rule->recipe == Recipe::kDecay && rule->decay != 0.f) {
    return absl::StrFormat("decay D=%g keeps pruned weights", rule->decay);
  }
  for (const BlockRule& block : rule->blocks) {
    if (!block.sparse) return "a dense row block";
    if (block.nm != NM{2, 4}) return absl::StrCat("N:M ", block.nm.n, ":", block.nm.m);
  }
  return "";
}

}  // namespace nmsparse
