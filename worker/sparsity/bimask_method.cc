#include "worker/sparsity/bimask_method.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/metric_names.h"
#include "worker/sparsity/bimask_masks.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/nm_sparsity_method.h"
#include "worker/sparsity/semi_structured/linear_accelerator.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/sparsity/sste_method.h"
#include "worker/sparsity/two_four.h"

namespace nmsparse {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr char kCallsPrefix[] = "bimask_forward_calls/";
constexpr char kPermutationPrefix[] = "bimask_permutation/";

// The per-sample slices x^T dY is summed over: every leading dim of a [..., T, C] input (B for the
// authors' [B, T, C]); a 2-D input is one sample, as their CNN's summed gradient.
int64_t SamplesOf(const torch::Tensor& input) {
  return input.dim() >= 3 ? input.numel() / (input.size(-2) * input.size(-1)) : 1;
}

// The bias is added outside (its gradient, sum dY, is autograd's), and the loss scale travels as saved data:
// LibTorch 1.13's Function::apply refuses undefined tensor inputs (an IValue is not an input).
class BimaskLinearFunction : public torch::autograd::Function<BimaskLinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& input, const torch::Tensor& weight,
                               const torch::Tensor& forward_mask, const torch::Tensor& backward_mask,
                               double decay, c10::IValue term_scale) {
    ctx->save_for_backward({input, weight, forward_mask, backward_mask});
    ctx->saved_data["decay"] = decay * MaskedDecayScale(MaskedDecaySite::kAutograd, SamplesOf(input));
    ctx->saved_data["term_scale"] = std::move(term_scale);
    return torch::linear(input, weight * forward_mask.to(weight.scalar_type()));
  }

  static variable_list backward(AutogradContext* ctx, const variable_list& grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &input = saved[0], &weight = saved[1], &forward_mask = saved[2];
    const torch::Tensor& backward_mask = saved[3];
    // Under autocast dY and X may be bf16: the backward GEMMs run in the weight's dtype.
    const torch::Tensor dy = grad_outputs[0].reshape({-1, weight.size(0)}).to(weight.scalar_type());
    const torch::Tensor x = input.reshape({-1, weight.size(1)}).to(weight.scalar_type());
    const torch::Tensor dx = dy.matmul(weight * backward_mask.to(weight.scalar_type()))
                                 .view(input.sizes())
                                 .to(input.scalar_type());
    torch::Tensor decay = (1 - forward_mask).to(weight.scalar_type()) * weight;
    decay.mul_(ctx->saved_data["decay"].toDouble());
    const torch::Tensor term_scale = ctx->saved_data["term_scale"].toTensor();
    if (term_scale.defined()) decay.mul_(term_scale.to(weight.scalar_type()));
    const torch::Tensor dw = dy.t().matmul(x).add_(decay);
    return {dx, dw, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

bool SparseRule(const LayerRule* rule) {
  return rule != nullptr && rule->recipe != Recipe::kDense && rule->AnySparseBlock();
}

// The rows Bi-Mask masks as one weight: the whole weight when every block is sparse (the authors' fused
// qkv is one NMConv), else each sparse block of a fused qkv on its own.
struct Unit {
  int64_t offset;
  int64_t rows;
  NM nm;
};

std::vector<Unit> UnitsOf(const LayerRule& rule, int64_t out) {
  const int64_t blocks = static_cast<int64_t>(rule.blocks.size()), rows = out / blocks;
  const bool all =
      std::all_of(rule.blocks.begin(), rule.blocks.end(), [](const BlockRule& b) { return b.sparse; });
  if (all) return {{0, out, rule.blocks.front().nm}};
  std::vector<Unit> units;
  for (int64_t b = 0; b < blocks; ++b) {
    if (rule.blocks[b].sparse) units.push_back({b * rows, rows, rule.blocks[b].nm});
  }
  return units;
}

// One layer's forward under Bi-Mask, with its forward-call counter and permutation.
class BimaskLayer : public LinearAccelerator {
 public:
  BimaskLayer(const torch::Tensor& weight, int64_t refresh, uint64_t seed, double decay,
              torch::Tensor term_scale)
      : refresh_(refresh), seed_(seed), decay_(decay), term_scale_(std::move(term_scale)) {
    const auto options = weight.options().dtype(torch::kFloat).requires_grad(false);
    forward_mask_ = torch::ones(weight.sizes(), options);
    backward_mask_ = torch::ones(weight.sizes(), options);
    permutation_ = torch::arange(weight.size(0), options.dtype(torch::kLong));
  }

  torch::Tensor Forward(const torch::Tensor& input, const torch::Tensor& weight, const LayerRule* rule,
                        const torch::Tensor& bias) override {
    if (deployed_ || !SparseRule(rule)) return torch::linear(input, weight, bias);
    const std::vector<Unit> units = UnitsOf(*rule, weight.size(0));
    if (forward_calls_ % refresh_ == 0) Search(weight, units);
    Recompute(weight, units);
    ++forward_calls_;
    if (!torch::GradMode::is_enabled() || !weight.requires_grad()) {
      return torch::linear(input, weight * forward_mask_.to(weight.scalar_type()), bias);
    }
    return BimaskLinear(input, weight, bias, forward_mask_, backward_mask_, decay_, term_scale_);
  }

  const torch::Tensor& forward_mask() const { return forward_mask_; }
  const torch::Tensor& backward_mask() const { return backward_mask_; }
  const torch::Tensor& permutation() const { return permutation_; }
  int64_t forward_calls() const { return forward_calls_; }
  void Restore(int64_t forward_calls, const torch::Tensor& permutation) {
    forward_calls_ = forward_calls;
    permutation_ = permutation.to(permutation_.device(), torch::kLong);
  }
  void set_deployed(bool deployed) { deployed_ = deployed; }

 private:
  // Each unit's permutation (of its own rows, kept in the layer's row numbering): the best of
  // kBimaskCandidates drawn from (seed, search count, unit).
  void Search(const torch::Tensor& weight, const std::vector<Unit>& units) {
    torch::NoGradGuard no_grad;
    const uint64_t searches = static_cast<uint64_t>(forward_calls_ / refresh_);
    for (size_t u = 0; u < units.size(); ++u) {
      const Unit& unit = units[u];
      const torch::Tensor candidates = BimaskCandidates(unit.rows, MvueStepSeed(seed_ + u, searches));
      const torch::Tensor best =
          BimaskBestPermutation(weight.narrow(0, unit.offset, unit.rows), candidates, unit.nm);
      permutation_.narrow(0, unit.offset, unit.rows).copy_(best + unit.offset);
    }
  }

  void Recompute(const torch::Tensor& weight, const std::vector<Unit>& units) {
    torch::NoGradGuard no_grad;
    forward_mask_.fill_(1);
    backward_mask_.fill_(1);
    for (const Unit& unit : units) {
      const torch::Tensor w = weight.narrow(0, unit.offset, unit.rows);
      const torch::Tensor forward = BimaskForwardMask(w, unit.nm);
      const torch::Tensor permutation = permutation_.narrow(0, unit.offset, unit.rows) - unit.offset;
      forward_mask_.narrow(0, unit.offset, unit.rows).copy_(forward);
      backward_mask_.narrow(0, unit.offset, unit.rows)
          .copy_(BimaskBackwardMask(w, forward, permutation, unit.nm));
    }
  }

  int64_t refresh_;
  uint64_t seed_;
  double decay_;
  torch::Tensor term_scale_;
  torch::Tensor forward_mask_;   // fp32 0/1 [out, in], of the last forward.
  torch::Tensor backward_mask_;  // fp32 0/1 [out, in], of the last forward.
  torch::Tensor permutation_;    // int64 [out]: the permuted row order, each unit within its own rows.
  int64_t forward_calls_ = 0;    // The authors' `iter`.
  bool deployed_ = false;        // MaskWeightsAtTarget masked W itself: a plain linear until the next step.
};

struct BimaskModuleLayer {
  std::string name;
  std::shared_ptr<SparseLinearImpl> linear;
  std::shared_ptr<BimaskLayer> bimask;
};

class BimaskMethod : public SparsityMethod {
 public:
  BimaskMethod(std::unique_ptr<SparsityMethod> engine_method, const SparsityConfig& config)
      : engine_method_(std::move(engine_method)),
        lambda_(config.srste_lambda),
        refresh_(config.permutation_refresh_forwards) {}

  void Install(torch::nn::Module& model, uint64_t seed, const torch::Tensor& term_scale) {
    uint64_t index = 0;
    for (const auto& item : model.named_modules()) {
      auto linear = std::dynamic_pointer_cast<SparseLinearImpl>(item.value());
      if (linear == nullptr || linear->rule() == nullptr) continue;
      // Three units at most per layer (Q, K, V): seeds 4 apart keep the layers' draws distinct.
      auto bimask = std::make_shared<BimaskLayer>(linear->weight, refresh_, MvueStepSeed(seed, 4 * index++),
                                                  lambda_, term_scale);
      linear->set_accelerator(bimask);
      layers_.push_back({item.key(), linear, std::move(bimask)});
    }
  }

  void BeginStep(int epoch, int64_t global_step) override {
    engine_method_->BeginStep(epoch, global_step);
    for (BimaskModuleLayer& layer : layers_) layer.bimask->set_deployed(false);
  }
  void AfterBackward(int64_t step) override { engine_method_->AfterBackward(step); }
  void AfterOptimizerStep(int64_t step) override { engine_method_->AfterOptimizerStep(step); }

  torch::Tensor HeldMask(const std::string& name) const override {
    for (const BimaskModuleLayer& layer : layers_) {
      if (layer.name == name) return layer.bimask->forward_mask();
    }
    return {};
  }

  // The forward calls of the layers (one count: every sparse layer runs once per forward pass) and the share
  // of their weights the last backward masks keep (the search's objective; N/M at best).
  SparsityReport Report(int64_t step, bool per_layer) const override {
    SparsityReport report = engine_method_->Report(step, per_layer);
    if (layers_.empty()) return report;
    report.numbers.emplace_back(contract::kBimaskForwardCalls,
                                static_cast<double>(layers_.front().bimask->forward_calls()));
    std::vector<torch::Tensor> kept;
    double numel = 0;
    for (const BimaskModuleLayer& layer : layers_) {
      kept.push_back(layer.bimask->backward_mask().sum(torch::kDouble));
      numel += static_cast<double>(layer.bimask->backward_mask().numel());
    }
    report.numbers.emplace_back(contract::kBackwardMaskDensity,
                                torch::stack(kept).sum().item<double>() / numel);
    return report;
  }

  // The forward GEMM multiplies W * forward (N:M along in-features) and the input-gradient GEMM W * backward
  // (N:M along the permuted output rows): both N/M for an N:M kernel, the engine's count; the weight
  // gradient is dense. The permutation search (G mask computations every I forwards) is not a GEMM.
  GemmDensity ForwardDensity() const override { return engine_method_->ForwardDensity(); }

  // The deployable model: W masked by the N:M forward mask of its final values.
  bool MaskWeightsAtTarget() override {
    if (layers_.empty()) return false;
    torch::NoGradGuard no_grad;
    for (BimaskModuleLayer& layer : layers_) {
      const torch::Tensor& w = layer.linear->weight;
      torch::Tensor mask = torch::ones_like(w, w.options().dtype(torch::kFloat));
      for (const Unit& unit : UnitsOf(*layer.linear->rule(), w.size(0))) {
        mask.narrow(0, unit.offset, unit.rows)
            .copy_(BimaskForwardMask(w.narrow(0, unit.offset, unit.rows), unit.nm));
      }
      w.mul_(mask.to(w.scalar_type()));
      layer.bimask->set_deployed(true);
    }
    return true;
  }

  NamedTensors StateDict() const override {
    NamedTensors state;
    for (const BimaskModuleLayer& layer : layers_) {
      state.emplace_back(kCallsPrefix + layer.name,
                         torch::tensor({layer.bimask->forward_calls()}, torch::kLong));
      state.emplace_back(kPermutationPrefix + layer.name, layer.bimask->permutation());
    }
    return state;
  }

  absl::Status LoadStateDict(const NamedTensors& state) override {
    if (state.size() != 2 * layers_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the checkpoint holds ", state.size(), " sparsity state tensor(s) but BIMASK on this model keeps ",
          2 * layers_.size(), " (a forward-call count and a permutation per layer)"));
    }
    const auto find = [&state](const std::string& key) -> const torch::Tensor* {
      const auto it =
          std::find_if(state.begin(), state.end(), [&](const auto& kv) { return kv.first == key; });
      return it == state.end() ? nullptr : &it->second;
    };
    for (BimaskModuleLayer& layer : layers_) {
      const torch::Tensor* calls = find(kCallsPrefix + layer.name);
      const torch::Tensor* permutation = find(kPermutationPrefix + layer.name);
      if (calls == nullptr || permutation == nullptr || calls->numel() != 1 ||
          permutation->numel() != layer.linear->weight.size(0)) {
        return absl::InvalidArgumentError(absl::StrCat("the checkpoint has no BIMASK state ", kCallsPrefix,
                                                       layer.name, " and ", kPermutationPrefix, layer.name,
                                                       " of the weight's rows"));
      }
      layer.bimask->Restore(calls->reshape({-1})[0].item<int64_t>(), *permutation);
    }
    return absl::OkStatus();
  }

  std::string Describe(int total_epochs, int64_t steps_per_epoch) override {
    std::string text = engine_method_->Describe(total_epochs, steps_per_epoch);
    absl::StrAppend(&text, "BIMASK: N:M forward mask of |W| at every forward; backward mask N:M along ",
                    "output rows permuted by the best of ", kBimaskCandidates,
                    " random permutations, searched at forward calls 0, ", refresh_, ", ", 2 * refresh_,
                    ", ... (evaluation counted); SR-STE decay ", lambda_,
                    " inside the backward, times the batch for [B, T, C] inputs\n");
    return text;
  }

 private:
  std::unique_ptr<SparsityMethod> engine_method_;
  double lambda_;
  int64_t refresh_;
  std::vector<BimaskModuleLayer> layers_;
};

}  // namespace

torch::Tensor BimaskLinear(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias,
                           const torch::Tensor& forward_mask, const torch::Tensor& backward_mask,
                           double decay, const torch::Tensor& term_scale) {
  const torch::Tensor y =
      BimaskLinearFunction::apply(input, weight, forward_mask, backward_mask, decay, c10::IValue(term_scale));
  return bias.defined() ? y + bias : y;
}

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateBimaskMethod(const SparsityConfig& config,
                                                                   torch::nn::Module& model,
                                                                   const SparsityMethodOptions& options) {
  // The engine places the layers and phases as for STE (hard mask, straight through); its masks are unused.
  auto engine_method = CreateSteTwoFourEngine(config, model, options);
  if (!engine_method.ok()) return engine_method.status();
  auto method = std::make_unique<BimaskMethod>(std::move(*engine_method), config);
  method->Install(model, options.seed(), options.srste_term_scale());
  return method;
}

}  // namespace nmsparse
