#include "worker/sparsity/sste_method.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/mvue_linear.h"
#include "worker/sparsity/nm_sparsity_method.h"
#include "worker/sparsity/semi_structured/linear_accelerator.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/sparsity/two_four.h"

namespace nmsparse {
namespace {

constexpr char kBetaPrefix[] = "sste_beta/";

// One layer's S-STE forward. Dense while the engine's rule is (a dense phase).
class SsteLinear : public LinearAccelerator {
 public:
  SsteLinear(double beta, torch::Generator generator) : beta_(beta), generator_(std::move(generator)) {}

  torch::Tensor Forward(const torch::Tensor& input, const torch::Tensor& weight, const LayerRule* rule,
                        const torch::Tensor& bias) override {
    if (rule == nullptr || rule->recipe == Recipe::kDense || !rule->AnySparseBlock()) {
      return torch::linear(input, weight, bias);
    }
    const torch::Tensor effective = StraightThrough(weight, SoftThresholdTwoFour(weight).mul_(beta_));
    if (!torch::GradMode::is_enabled() || !weight.requires_grad())
      return torch::linear(input, effective, bias);
    return MvueLinear(input, effective, bias, generator_);
  }

  double beta() const { return beta_; }
  void set_beta(double beta) { beta_ = beta; }

 private:
  double beta_;
  torch::Generator generator_;
};

class SsteMethod : public SparsityMethod {
 public:
  SsteMethod(std::unique_ptr<SparsityMethod> engine_method, uint64_t seed)
      : engine_method_(std::move(engine_method)),
        seed_(seed),
        generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

  // Every linear the engine gave a rule gets the S-STE forward, with beta from its current weight.
  void Install(torch::nn::Module& model) {
    for (const auto& item : model.named_modules()) {
      auto linear = std::dynamic_pointer_cast<SparseLinearImpl>(item.value());
      if (linear == nullptr || linear->rule() == nullptr) continue;
      auto sste = std::make_shared<SsteLinear>(SoftThresholdScale(linear->weight), generator_);
      linear->set_accelerator(sste);
      layers_.emplace_back(item.key(), std::move(sste));
    }
  }

  void BeginStep(int epoch, int64_t global_step) override {
    engine_method_->BeginStep(epoch, global_step);
    generator_.set_current_seed(MvueStepSeed(seed_, global_step));
  }
  void AfterBackward(int64_t step) override { engine_method_->AfterBackward(step); }
  void AfterOptimizerStep(int64_t step) override { engine_method_->AfterOptimizerStep(step); }
  SparsityReport Report(int64_t step, bool per_layer) const override {
    return engine_method_->Report(step, per_layer);
  }
  // The forward and input-gradient GEMMs multiply the 2:4 beta * S(W): the engine's hard 2:4 count; the
  // weight gradient multiplies MVUE 2:4 of dY^T whenever the layers are sparse.
  GemmDensity ForwardDensity() const override {
    GemmDensity density = engine_method_->ForwardDensity();
    if (density.ff < 1.0 || density.qkv < 1.0) density.weight_gradient = 0.5;
    return density;
  }

  NamedTensors StateDict() const override {
    NamedTensors state;
    for (const auto& [name, layer] : layers_) {
      state.emplace_back(kBetaPrefix + name, torch::tensor({layer->beta()}, torch::kDouble));
    }
    return state;
  }

  absl::Status LoadStateDict(const NamedTensors& state) override {
    if (state.size() != layers_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the checkpoint holds ", state.size(),
                                                     " S-STE scale(s) but this model has ", layers_.size(),
                                                     " S-STE layer(s)"));
    }
    for (auto& [name, layer] : layers_) {
      const auto it = std::find_if(state.begin(), state.end(),
                                   [&](const auto& kv) { return kv.first == kBetaPrefix + name; });
      if (it == state.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the checkpoint has no S-STE scale ", kBetaPrefix, name));
      }
      layer->set_beta(it->second.item<double>());
    }
    return absl::OkStatus();
  }

  std::string Describe(int total_epochs, int64_t steps_per_epoch) override {
    std::string text = engine_method_->Describe(total_epochs, steps_per_epoch);
    for (const auto& [name, layer] : layers_)
      absl::StrAppend(&text, "S-STE ", name, " beta ", layer->beta(), "\n");
    return text;
  }

 private:
  std::unique_ptr<SparsityMethod> engine_method_;
  uint64_t seed_;
  torch::Generator generator_;  // Shared by the layers; reseeded at every step.
  std::vector<std::pair<std::string, std::shared_ptr<SsteLinear>>> layers_;
};

}  // namespace

uint64_t MvueStepSeed(uint64_t seed, int64_t step) {
  // splitmix64 of (seed, step): distinct, well-mixed seeds for neighbouring steps and runs.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(step) + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateSsteMethod(const SparsityConfig& config,
                                                                 torch::nn::Module& model,
                                                                 const SparsityMethodOptions& options) {
  // The engine places the layers and phases as for STE 2:4 (hard mask, straight through).
  auto engine_method = CreateSteTwoFourEngine(config, model, options);
  if (!engine_method.ok()) return engine_method.status();
  auto method = std::make_unique<SsteMethod>(std::move(*engine_method), options.seed());
  method->Install(model);
  return method;
}

}  // namespace nmsparse
