// One training step (forward, backward, AdamW) of a stack of ViT-S/16-shaped blocks (dim 384, 6 heads,
// MLP 1536, 197 tokens) on CPU: dense vs 2:4 SR-STE vs 1:8 MDGF-Exp on FF + QKV, median ms/step and the
// ratio sparse/dense (target <= 1.05), plus the cost of one mask of a [1536, 384] weight.
// The blocks are the trainer's VitBlock (worker/trainer/models), i.e. the model code a run trains.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "bench/interleaved.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/sparse_functions.h"
#include "worker/sparsity/sparsity_engine.h"
#include "worker/trainer/kernels/kernel_isa.h"
#include "worker/trainer/models/vision_transformer.h"

ABSL_FLAG(int, depth, 4, "ViT-S blocks in the stack");
ABSL_FLAG(int, batch, 8, "images per step");
ABSL_FLAG(int, warmup, 2, "untimed steps per recipe");
ABSL_FLAG(int, reps, 7, "timed steps per recipe (median reported)");
ABSL_FLAG(int, threads, 0, "intra-op threads (0: LibTorch's default)");
ABSL_FLAG(int, mask_reps, 50, "timed repetitions of the mask micro-benchmark");
ABSL_FLAG(bool, masks_only, false, "run only the mask micro-benchmark");

namespace nmsparse {
namespace {

constexpr int64_t kDim = 384;
constexpr int64_t kHeads = 6;
constexpr int64_t kTokens = 197;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double TimeMs(const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

struct BenchRecipe {
  std::string name;
  SparsityConfig config;
};

std::vector<BenchRecipe> Recipes() {
  const std::vector<SparsityLocation> ff_qkv = {SparsityLocation::kFF, SparsityLocation::kQ,
                                                SparsityLocation::kK, SparsityLocation::kV};
  BenchRecipe dense{"dense", {}};
  dense.config.sparsity_type = SparsityType::kDense;
  BenchRecipe srste{"2:4 SR-STE", {}};
  srste.config.sparsity_type = SparsityType::kSrste;
  srste.config.nm = srste.config.nm_qkv = {2, 4};
  srste.config.locations = ff_qkv;
  BenchRecipe mdgf{"1:8 MDGF-Exp", {}};
  mdgf.config.sparsity_type = SparsityType::kStructuredNM;
  mdgf.config.decay_type = DecayType::kExp;
  mdgf.config.nm = mdgf.config.nm_qkv = {1, 8};
  mdgf.config.locations = ff_qkv;
  return {dense, srste, mdgf};
}

// A freshly seeded stack of blocks with its engine and optimizer, stepping through the recipe.
class Stack {
 public:
  explicit Stack(const BenchRecipe& recipe) : x_(torch::randn({absl::GetFlag(FLAGS_batch), kTokens, kDim})) {
    torch::manual_seed(0);
    root_ = std::make_shared<torch::nn::Module>();
    blocks_ = root_->register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < absl::GetFlag(FLAGS_depth); ++i) {
      blocks_->push_back(VitBlock(VitBlockOptions(kDim, kHeads).qkv_bias(true)));
    }
    auto engine = SparsityEngine::Create(recipe.config, 100, 1000, *root_);
    TORCH_CHECK(engine.ok(), engine.status().ToString());
    engine_ = *std::move(engine);
    optimizer_ = std::make_unique<torch::optim::AdamW>(root_->parameters(), torch::optim::AdamWOptions(1e-4));
  }

  // One optimizer step; returns its wall time in ms.
  double Step() {
    return TimeMs([&] {
      engine_->BeginStep(static_cast<int>(step_ / 1000), step_);
      ++step_;
      torch::Tensor h = x_;
      for (const auto& block : *blocks_) h = block->as<VitBlockImpl>()->forward(h);
      torch::Tensor loss = h.pow(2).mean();
      optimizer_->zero_grad();
      loss.backward();
      optimizer_->step();
    });
  }

 private:
  torch::Tensor x_;
  std::shared_ptr<torch::nn::Module> root_;
  torch::nn::ModuleList blocks_{nullptr};
  std::unique_ptr<SparsityEngine> engine_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  int64_t step_ = 0;
};

// Median ms of `fn` over mask_reps runs.
// (Warm-up is generous: glibc's malloc adapts its mmap threshold to the 2.3 MB masks only after a few
// frees; before that every mask is fresh mmapped memory and page faults dominate.)
double MicroMs(const std::function<void()>& fn) {
  for (int i = 0; i < 20; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < absl::GetFlag(FLAGS_mask_reps); ++i) ms.push_back(TimeMs(fn));
  return Median(ms);
}

// `fn` on each path of the N:M selection (plain C++, AVX2, AVX-512 where the CPU has them) in interleaved
// rounds: one line of medians and the ratios to the plain path and AVX2 / AVX-512.
void PathsLine(const std::string& name, const std::function<void()>& fn) {
  std::vector<KernelIsa> paths = {KernelIsa::kScalar};
  for (KernelIsa isa : {KernelIsa::kAvx2, KernelIsa::kAvx512}) {
    if (CpuKernelIsa() >= isa) paths.push_back(isa);
  }
  std::vector<std::function<void()>> variants;
  for (KernelIsa isa : paths) {
    variants.push_back([=] {
      SetKernelIsaCap(isa);
      fn();
      SetKernelIsaCap(KernelIsa::kAvx512);
    });
  }
  const std::vector<double> ms = bench::InterleavedMedianMs(variants, absl::GetFlag(FLAGS_mask_reps), 20);
  std::printf("  %-44s", name.c_str());
  for (size_t i = 0; i < paths.size(); ++i) std::printf(" %s %7.3f", KernelIsaName(paths[i]), ms[i]);
  std::printf("   scalar/best %5.2fx", ms[0] / ms.back());
  if (paths.size() == 3) std::printf("   avx2/avx512 %5.2fx", ms[1] / ms[2]);
  std::printf("\n");
}

void MaskMicroBenchmark() {
  torch::manual_seed(1);
  const torch::Tensor w = torch::randn({1536, 384});
  LayerRule rule;
  rule.recipe = nmsparse::Recipe::kDecay;
  rule.decay = 0.5f;
  std::printf("\nmask of one [1536, 384] weight (median of %d interleaved rounds, ms; load %s):\n",
              absl::GetFlag(FLAGS_mask_reps), bench::LoadAverage().c_str());
  for (NM nm : std::vector<NM>{{2, 4}, {1, 8}, {4, 8}, {8, 64}, {16, 32}, {16, 128}, {8, 256}, {8, 1024}}) {
    const std::string name = std::to_string(nm.n) + ":" + std::to_string(nm.m);
    PathsLine("NMMask " + name + " row", [&] { NMMask(w, nm, SparseDim::kRow, false); });
    PathsLine("NMMask " + name + " col", [&] { NMMask(w, nm, SparseDim::kCol, false); });
  }
  rule.blocks = {BlockRule{true, {1, 8}}};
  PathsLine("W~ = W * (mask + D(1-mask)), 1:8, mask incl.", [&] { ApplyLayerRule(w, &rule); });
  rule.blocks = {BlockRule{true, {2, 4}}};
  PathsLine("W~ = W * (mask + D(1-mask)), 2:4, mask incl.", [&] { ApplyLayerRule(w, &rule); });
  PathsLine("LayerMask 2:4", [&] { LayerMask(w, rule, 0.5f); });
  const torch::Tensor mult = LayerMask(w, rule, 0.5f);
  std::printf("  W * multiplier alone: %.3f ms\n", MicroMs([&] { w* mult; }));
  std::printf("  unstructured 0.9 (one group of 589824): %.3f ms\n",
              MicroMs([&] { UnstructuredMask(w, 0.9); }));
}

}  // namespace
}  // namespace nmsparse

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_threads) > 0) torch::set_num_threads(absl::GetFlag(FLAGS_threads));
  std::printf(
      "ViT-S/16 blocks: depth %d, batch %d x %lld tokens x dim %lld, %d threads; %d warm-up + %d timed "
      "steps (median)\n",
      absl::GetFlag(FLAGS_depth), absl::GetFlag(FLAGS_batch), static_cast<long long>(nmsparse::kTokens),
      static_cast<long long>(nmsparse::kDim), torch::get_num_threads(), absl::GetFlag(FLAGS_warmup),
      absl::GetFlag(FLAGS_reps));
  std::printf("load average at start: %s; N:M selection up to %s\n", nmsparse::bench::LoadAverage().c_str(),
              nmsparse::KernelIsaName(nmsparse::ActiveKernelIsa()));
  if (absl::GetFlag(FLAGS_masks_only)) {
    nmsparse::MaskMicroBenchmark();
    return 0;
  }
  // Recipes take turns step by step, so that load from other processes hits them alike.
  const std::vector<nmsparse::BenchRecipe> recipes = nmsparse::Recipes();
  std::vector<std::unique_ptr<nmsparse::Stack>> stacks;
  for (const auto& recipe : recipes) stacks.push_back(std::make_unique<nmsparse::Stack>(recipe));
  for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) {
    for (auto& stack : stacks) stack->Step();
  }
  std::vector<std::vector<double>> ms(recipes.size());
  for (int i = 0; i < absl::GetFlag(FLAGS_reps); ++i) {
    for (size_t r = 0; r < stacks.size(); ++r) ms[r].push_back(stacks[r]->Step());
  }
  const double dense_ms = nmsparse::Median(ms[0]);
  for (size_t r = 0; r < recipes.size(); ++r) {
    const double median = nmsparse::Median(ms[r]);
    std::printf("  %-14s %9.1f ms/step (min %.1f)   ratio to dense %.3f\n", recipes[r].name.c_str(), median,
                *std::min_element(ms[r].begin(), ms[r].end()), median / dense_ms);
  }
  std::printf("load average after the steps: %s\n", nmsparse::bench::LoadAverage().c_str());
  std::fflush(stdout);
  nmsparse::MaskMicroBenchmark();
  return 0;
}
