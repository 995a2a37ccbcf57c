#include "worker/sparsity/bimask_masks.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <vector>

#include "worker/sparsity/two_four.h"

namespace nmsparse {
namespace {

// The backward selection of the permuted masked weight `permuted` [out, in] (rows already permuted): N of
// every M consecutive rows per column, AND the permuted forward mask.
torch::Tensor PermutedBackwardMask(const torch::Tensor& permuted, const torch::Tensor& permuted_forward,
                                   NM nm) {
  const torch::Tensor by_column = HardNMMask(permuted.t().contiguous(), nm);  // [in, out]: groups of rows.
  return by_column.t() * permuted_forward;
}

}  // namespace

torch::Tensor BimaskForwardMask(const torch::Tensor& weight, NM nm) {
  return HardNMMask(weight.detach().to(torch::kFloat), nm);
}

torch::Tensor BimaskBackwardMask(const torch::Tensor& weight, const torch::Tensor& forward_mask,
                                 const torch::Tensor& permutation, NM nm) {
  torch::NoGradGuard no_grad;
  const torch::Tensor masked = weight.detach().to(torch::kFloat) * forward_mask;
  const torch::Tensor final_mask = PermutedBackwardMask(masked.index_select(0, permutation),
                                                        forward_mask.index_select(0, permutation), nm);
  return torch::zeros_like(final_mask).index_copy_(0, permutation, final_mask);
}

torch::Tensor BimaskPermutationScores(const torch::Tensor& weight, const torch::Tensor& candidates, NM nm) {
  torch::NoGradGuard no_grad;
  const torch::Tensor forward = BimaskForwardMask(weight, nm);
  const torch::Tensor masked = weight.detach().to(torch::kFloat) * forward;
  std::vector<torch::Tensor> scores;
  // One candidate at a time: a batched [G, out, in] copy would cost G times the weight's memory.
  for (int64_t g = 0; g < candidates.size(0); ++g) {
    const torch::Tensor p = candidates[g];
    scores.push_back(PermutedBackwardMask(masked.index_select(0, p), forward.index_select(0, p), nm).sum());
  }
  return torch::stack(scores);
}

torch::Tensor BimaskBestPermutation(const torch::Tensor& weight, const torch::Tensor& candidates, NM nm) {
  const torch::Tensor on_device = candidates.to(weight.device());
  const torch::Tensor scores = BimaskPermutationScores(weight, on_device, nm);
  const torch::Tensor best = on_device[scores.argmax()];  // argmax: the first maximum.
  const torch::Tensor identity = torch::arange(weight.size(0), on_device.options());
  return torch::where(scores.max().gt(0), best, identity);
}

torch::Tensor BimaskCandidates(int64_t rows, uint64_t seed) {
  torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<torch::Tensor> candidates;
  for (int64_t g = 0; g < kBimaskCandidates; ++g) {
    candidates.push_back(torch::randperm(rows, generator, torch::kLong));
  }
  return torch::stack(candidates);
}

}  // namespace nmsparse
