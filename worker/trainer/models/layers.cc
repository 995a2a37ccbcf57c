#include "worker/trainer/models/layers.h"

#include <torch/nn/modules/linear.h>
#include <torch/torch.h>

#include "worker/trainer/kernels/fused_gelu.h"
#include "worker/trainer/kernels/fused_mlp.h"

namespace nmsparse {

MlpImpl::MlpImpl(const MlpOptions& options) : options(options) { reset(); }

void MlpImpl::reset() {
  fc1 = register_module("fc1", SparseLinear(options.in_features(), options.hidden_features()));
  drop1_ = register_module("drop1", torch::nn::Dropout(options.drop()));
  fc2 = register_module("fc2", SparseLinear(options.hidden_features(), options.in_features()));
  drop2_ = register_module("drop2", torch::nn::Dropout(options.drop()));
}

void MlpImpl::pretty_print(std::ostream& stream) const {
  stream << "nmsparse::Mlp(in_features=" << options.in_features()
         << ", hidden_features=" << options.hidden_features() << ", drop=" << options.drop() << ")";
}

// Without dropout in the way, CPU float32 runs fc1 -> GELU -> fc2 as one fused node
// (worker/trainer/kernels/fused_mlp.h); the effective (masked) weights are computed once either way.
torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  if (fc1->accelerated() || fc2->accelerated()) {  // The 2:4 semi-structured linears run their own forward.
    return drop2_(fc2->forward(drop1_(Gelu(fc1->forward(x)))));
  }
  auto w1 = fc1->EffectiveWeight(), w2 = fc2->EffectiveWeight();
  const bool dropout = is_training() && (drop1_->options.p() > 0.0 || drop2_->options.p() > 0.0);
  if (!dropout && FusedMlpApplies(x, w1, fc1->bias, w2, fc2->bias)) {
    return FusedMlp(x, w1, fc1->bias, w2, fc2->bias);
  }
  return drop2_(torch::linear(drop1_(Gelu(torch::linear(x, w1, fc1->bias))), w2, fc2->bias));
}

torch::Tensor DropPath(const torch::Tensor& x, double rate, bool training) {
  if (rate <= 0.0 || !training) return x;
  const double keep = 1.0 - rate;
  std::vector<int64_t> shape(x.dim(), 1);
  shape[0] = x.size(0);
  torch::Tensor mask = torch::empty(shape, x.options()).bernoulli_(keep);
  return x * mask.div_(keep);
}

void TruncNormal(torch::Tensor& t, double std) {
  torch::NoGradGuard no_grad;
  t.normal_(0.0, std).clamp_(-2.0, 2.0);
}

void InitLinearsTimm(torch::nn::Module& root) {
  torch::NoGradGuard no_grad;
  for (const auto& module : root.modules(/*include_self=*/false)) {
    if (auto* sparse = module->as<SparseLinearImpl>()) {
      TruncNormal(sparse->weight, 0.02);
      if (sparse->bias.defined()) sparse->bias.zero_();
    } else if (auto* linear = module->as<torch::nn::LinearImpl>()) {
      TruncNormal(linear->weight, 0.02);
      if (linear->bias.defined()) linear->bias.zero_();
    }
  }
}

std::vector<double> DropPathRates(double rate, int64_t n) {
  std::vector<double> rates(n, 0.0);
  for (int64_t i = 0; i < n && n > 1; ++i) rates[i] = rate * static_cast<double>(i) / (n - 1);
  if (n == 1) rates[0] = 0.0;
  return rates;
}

}  // namespace nmsparse
