#include "worker/sparsity/hu24_method.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/metric_names.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/mvue_linear.h"
#include "worker/sparsity/nm_sparsity_method.h"
#include "worker/sparsity/semi_structured/linear_accelerator.h"
#include "worker/sparsity/semi_structured/transposable_mask.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/sparsity/sste_method.h"
#include "worker/sparsity/two_four.h"

namespace nmsparse {
namespace {

constexpr char kMaskPrefix[] = "hu24_mask/";
constexpr char kRefreshStepKey[] = "hu24_refresh/step";
constexpr char kRefreshFlipsKey[] = "hu24_refresh/flips";

bool SparseRule(const LayerRule* rule) {
  return rule != nullptr && rule->recipe != Recipe::kDense && rule->AnySparseBlock();
}

// The transposable 2:4 mask of `weight` under `rule`: each block of output rows (Q, K, V of a fused qkv) is
// tiled on its own; a dense block keeps ones.
torch::Tensor TransposableMaskOf(const torch::Tensor& weight, const LayerRule& rule) {
  torch::NoGradGuard no_grad;
  const int64_t blocks = static_cast<int64_t>(rule.blocks.size());
  const int64_t rows = weight.size(0) / blocks;
  std::vector<torch::Tensor> parts;
  for (int64_t b = 0; b < blocks; ++b) {
    const torch::Tensor block = weight.detach().narrow(0, b * rows, rows);
    parts.push_back(rule.blocks[b].sparse ? AuthorsTransposableMask(block)
                                          : torch::ones_like(block, block.options().dtype(torch::kFloat)));
  }
  return torch::cat(parts, 0);
}

// One layer's forward under HU24: W * mask straight through with the MVUE weight gradient while its rule is
// sparse, a plain linear otherwise (the dense fine-tune: plain autograd, no MVUE).
class Hu24Linear : public LinearAccelerator {
 public:
  Hu24Linear(const torch::Tensor& weight, torch::Generator generator)
      : mask_(torch::ones_like(weight, weight.options().dtype(torch::kFloat))),
        generator_(std::move(generator)) {}

  torch::Tensor Forward(const torch::Tensor& input, const torch::Tensor& weight, const LayerRule* rule,
                        const torch::Tensor& bias) override {
    if (deployed_ || !SparseRule(rule)) return torch::linear(input, weight, bias);
    const torch::Tensor effective = StraightThrough(weight, weight.detach() * mask_.to(weight.scalar_type()));
    if (!torch::GradMode::is_enabled() || !weight.requires_grad())
      return torch::linear(input, effective, bias);
    return MvueLinear(input, effective, bias, generator_);
  }

  // Recomputes the mask from `weight`; returns the number of entries that changed (a device scalar).
  torch::Tensor Refresh(const torch::Tensor& weight, const LayerRule& rule) {
    torch::Tensor fresh = TransposableMaskOf(weight, rule);
    torch::Tensor flips = fresh.ne(mask_).sum(torch::kDouble);
    mask_ = std::move(fresh);
    return flips;
  }

  const torch::Tensor& mask() const { return mask_; }
  void set_mask(torch::Tensor mask) { mask_ = std::move(mask); }
  void set_deployed(bool deployed) { deployed_ = deployed; }

 private:
  torch::Tensor mask_;  // fp32 0/1, the weight's shape and device.
  torch::Generator generator_;
  bool deployed_ = false;  // MaskWeightsAtTarget masked W itself: a plain linear until the next step.
};

struct Hu24Layer {
  std::string name;
  std::shared_ptr<SparseLinearImpl> linear;
  std::shared_ptr<Hu24Linear> hu24;
};

class Hu24Method : public SparsityMethod {
 public:
  Hu24Method(std::unique_ptr<SparsityMethod> engine_method, const SparsityConfig& config, uint64_t seed)
      : engine_method_(std::move(engine_method)),
        lambda_(config.srste_lambda),
        refresh_steps_(config.mask_refresh_steps),
        seed_(seed),
        generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

  void Install(torch::nn::Module& model) {
    for (const auto& item : model.named_modules()) {
      auto linear = std::dynamic_pointer_cast<SparseLinearImpl>(item.value());
      if (linear == nullptr || linear->rule() == nullptr) continue;
      auto hu24 = std::make_shared<Hu24Linear>(linear->weight, generator_);
      linear->set_accelerator(hu24);
      layers_.push_back({item.key(), linear, std::move(hu24)});
    }
    const torch::Device device =
        layers_.empty() ? torch::Device(torch::kCPU) : layers_.front().linear->weight.device();
    flips_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    for (const Hu24Layer& layer : layers_) sparse_numel_ += static_cast<double>(layer.linear->weight.numel());
    PrepareTransposableMask(device);  // The pattern tables' one host-to-device copy, before step 1.
  }

  // The authors' counter: the forward of optimizer step s = global_step + 1 recomputes the masks when s is a
  // multiple of k. W is then the weight after step s - 1, as in their forward.
  void BeginStep(int epoch, int64_t global_step) override {
    engine_method_->BeginStep(epoch, global_step);
    generator_.set_current_seed(MvueStepSeed(seed_, global_step));
    for (Hu24Layer& layer : layers_) layer.hu24->set_deployed(false);
    const int64_t step = global_step + 1;
    if (step % refresh_steps_ == 0 && refreshed_at_ != step) Refresh(step);
  }

  void AfterBackward(int64_t step) override { engine_method_->AfterBackward(step); }

  // MaskedDecaySite::kInOptimizer: after clipping, before the update; nothing while the masks are all ones.
  void BeforeOptimizerUpdate(int64_t /*global_step*/) override {
    if (lambda_ <= 0.0 || refreshed_at_ == 0) return;
    for (Hu24Layer& layer : layers_) {
      torch::Tensor grad = layer.linear->weight.mutable_grad();
      if (!SparseRule(layer.linear->rule().get()) || !grad.defined()) continue;
      AddMaskedDecay(grad, layer.linear->weight, layer.hu24->mask(), lambda_);
    }
  }

  void AfterOptimizerStep(int64_t step) override { engine_method_->AfterOptimizerStep(step); }

  torch::Tensor HeldMask(const std::string& name) const override {
    for (const Hu24Layer& layer : layers_) {
      if (layer.name == name) return layer.hu24->mask();
    }
    return {};
  }

  SparsityReport Report(int64_t step, bool per_layer) const override {
    SparsityReport report = engine_method_->Report(step, per_layer);
    report.numbers.emplace_back(contract::kMaskRefreshStep, static_cast<double>(refreshed_at_));
    if (refreshed_at_ > 0 && sparse_numel_ > 0) {
      report.numbers.emplace_back(contract::kRefreshFlipRate, flips_.item<double>() / sparse_numel_);
    }
    return report;
  }

  // Forward and input gradient multiply W * mask: 2:4 once a mask exists, dense before; the weight gradient
  // multiplies MVUE 2:4 of dY^T whenever the layers are sparse. A dense phase is dense throughout.
  GemmDensity ForwardDensity() const override {
    GemmDensity density = engine_method_->ForwardDensity();
    if (density.ff >= 1.0 && density.qkv >= 1.0) return density;
    if (refreshed_at_ == 0) density.ff = density.qkv = 1.0;
    density.weight_gradient = 0.5;
    return density;
  }

  // The deployable model: W masked by a transposable 2:4 mask of its final values, and the layers plain
  // linears of it until the next step.
  bool MaskWeightsAtTarget() override {
    if (layers_.empty()) return false;
    torch::NoGradGuard no_grad;
    for (Hu24Layer& layer : layers_) {
      const torch::Tensor& w = layer.linear->weight;
      LayerRule target = *layer.linear->rule();
      target.recipe = Recipe::kSrste;  // Any sparse recipe: the blocks say which rows are sparse.
      w.mul_(TransposableMaskOf(w, target).to(w.scalar_type()));
      layer.hu24->set_deployed(true);
    }
    return true;
  }

  NamedTensors StateDict() const override {
    NamedTensors state;
    for (const Hu24Layer& layer : layers_) {
      state.emplace_back(kMaskPrefix + layer.name, layer.hu24->mask().to(torch::kUInt8));
    }
    state.emplace_back(kRefreshStepKey, torch::tensor({refreshed_at_}, torch::kLong));
    state.emplace_back(kRefreshFlipsKey, flips_.reshape({1}));
    return state;
  }

  absl::Status LoadStateDict(const NamedTensors& state) override {
    if (state.size() != layers_.size() + 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("the checkpoint holds ", state.size(),
                       " sparsity state tensor(s) but HU24 on this model keeps ", layers_.size() + 2,
                       " (a mask per layer, the refresh step "
                       "and its flips)"));
    }
    const auto find = [&state](const std::string& key) -> const torch::Tensor* {
      const auto it =
          std::find_if(state.begin(), state.end(), [&](const auto& kv) { return kv.first == key; });
      return it == state.end() ? nullptr : &it->second;
    };
    for (Hu24Layer& layer : layers_) {
      const torch::Tensor* mask = find(kMaskPrefix + layer.name);
      const torch::Tensor& w = layer.linear->weight;
      if (mask == nullptr || !mask->sizes().equals(w.sizes())) {
        return absl::InvalidArgumentError(absl::StrCat("the checkpoint has no HU24 mask ", kMaskPrefix,
                                                       layer.name, " of the weight's shape"));
      }
      layer.hu24->set_mask(mask->to(w.device(), torch::kFloat));
    }
    const torch::Tensor* step = find(kRefreshStepKey);
    const torch::Tensor* flips = find(kRefreshFlipsKey);
    if (step == nullptr || flips == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("the checkpoint has no ", kRefreshStepKey, " or ", kRefreshFlipsKey));
    }
    refreshed_at_ = step->reshape({-1})[0].item<int64_t>();
    flips_ = flips->to(flips_.device(), torch::kDouble).reshape({});
    return absl::OkStatus();
  }

  std::string Describe(int total_epochs, int64_t steps_per_epoch) override {
    std::string text = engine_method_->Describe(total_epochs, steps_per_epoch);
    absl::StrAppend(&text, "HU24: transposable 2:4 masks all ones before step ", refresh_steps_,
                    ", recomputed at steps ", refresh_steps_, ", ", 2 * refresh_steps_,
                    ", ... and held between; MVUE 2:4 weight gradient; masked decay ", lambda_,
                    " after clipping; a dense phase trains plain linears\n");
    return text;
  }

 private:
  void Refresh(int64_t step) {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> flips;
    for (Hu24Layer& layer : layers_) {
      const LayerRule* rule = layer.linear->rule().get();
      if (!SparseRule(rule)) continue;
      flips.push_back(layer.hu24->Refresh(layer.linear->weight, *rule));
    }
    if (flips.empty()) return;  // A dense phase: nothing recomputed, the counter waits.
    // The authors compare with the mask of the previous refresh; the all-ones start counts no flips.
    flips_ = refreshed_at_ == 0 ? torch::zeros_like(flips_) : torch::stack(flips).sum();
    refreshed_at_ = step;
  }

  std::unique_ptr<SparsityMethod> engine_method_;
  double lambda_;
  int64_t refresh_steps_;
  uint64_t seed_;
  torch::Generator generator_;  // Shared by the layers; reseeded at every step.
  std::vector<Hu24Layer> layers_;
  int64_t refreshed_at_ = 0;   // The 1-based step whose forward last recomputed the masks; 0: all ones.
  torch::Tensor flips_;        // Entries changed at that refresh (device scalar, read at log points only).
  double sparse_numel_ = 0.0;  // Weights of the HU24 layers: the authors' flip rate divides by it.
};

}  // namespace

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateHu24Method(const SparsityConfig& config,
                                                                 torch::nn::Module& model,
                                                                 const SparsityMethodOptions& options) {
  // The engine places the layers and phases as for STE 2:4; its masks are never used.
  auto engine_method = CreateSteTwoFourEngine(config, model, options);
  if (!engine_method.ok()) return engine_method.status();
  auto method = std::make_unique<Hu24Method>(std::move(*engine_method), config, options.seed());
  method->Install(model);
  return method;
}

}  // namespace nmsparse
