#include "worker/sparsity/sparsity_diagnostics.h"

#include <torch/torch.h>

#include <memory>

#include "absl/strings/match.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/sparse_functions.h"
#include "worker/sparsity/sparse_linear.h"

namespace nmsparse {
namespace {

// The layer kinds of docs/sparsity-method.md §5, by the end of the timm module name.
std::string KindOf(const std::string& name) {
  if (absl::EndsWith(name, "mlp.fc1") || absl::EndsWith(name, "mlp.fc2")) return "ff";
  if (absl::EndsWith(name, "attn.qkv")) return "qkv";
  if (absl::EndsWith(name, "attn.proj")) return "o";
  if (absl::EndsWith(name, "patch_embed.proj")) return "c";
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

template <typename Impl>
std::function<const LayerRule*()> RuleOf(const std::shared_ptr<Impl>& layer) {
  return [layer] { return layer->rule().get(); };
}

}  // namespace

SparsityDiagnostics::SparsityDiagnostics(torch::nn::Module& model, HeldMaskFunction held_mask)
    : held_mask_(std::move(held_mask)) {
  for (const auto& item : model.named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    const std::string& name = item.key();
    if (auto linear = std::dynamic_pointer_cast<SparseLinearImpl>(item.value())) {
      layers_.push_back({name, KindOf(name), linear->weight, RuleOf(linear), {}});
    } else if (auto conv = std::dynamic_pointer_cast<SparseConv2dImpl>(item.value())) {
      layers_.push_back({name, KindOf(name), conv->weight, RuleOf(conv), {}});
    }
  }
}

void SparsityDiagnostics::Observe(int64_t line_step) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> rows;
  observed_.clear();
  read_.clear();
  observed_step_ = line_step;
  for (Layer& layer : layers_) {
    const LayerRule* rule = layer.rule();
    const torch::Tensor& grad = layer.weight.grad();
    // A held mask counts on its own: dynamic sparsity's layers keep a dense rule.
    const torch::Tensor held = held_mask_ ? held_mask_(layer.name) : torch::Tensor();
    const bool rule_sparse = rule != nullptr && rule->recipe != Recipe::kDense && rule->AnySparseBlock();
    if ((!held.defined() && !rule_sparse) || !grad.defined()) {
      layer.previous_kept = torch::Tensor();  // A dense stretch breaks the comparison.
      continue;
    }
    const torch::Tensor kept =
        held.defined() ? held.ne(0) : LayerMask(layer.weight.detach(), *rule, 0.f).ne(0);
    const torch::Tensor squares = grad.square();
    const torch::Tensor flipped =
        layer.previous_kept.defined()
            ? kept.ne(layer.previous_kept).sum(torch::kDouble)
            : torch::full({}, -1.0, torch::TensorOptions().dtype(torch::kDouble).device(kept.device()));
    rows.push_back(torch::stack({flipped, squares.masked_fill(kept, 0).sum(torch::kDouble),
                                 squares.masked_fill(kept.logical_not(), 0).sum(torch::kDouble)}));
    layer.previous_kept = kept;
    observed_.push_back(&layer);
  }
  pending_ = rows.empty() ? torch::Tensor() : torch::stack(rows);
}

std::vector<LayerDiagnostics> SparsityDiagnostics::Read(int64_t line_step) {
  if (line_step != observed_step_) return {};
  if (!pending_.defined()) return read_;
  const torch::Tensor values = pending_.to(torch::kCPU);  // The log point's one read of them.
  pending_ = torch::Tensor();
  const auto v = values.accessor<double, 2>();
  for (size_t i = 0; i < observed_.size(); ++i) {
    const Layer& layer = *observed_[i];
    read_.push_back({layer.name, layer.kind, layer.weight.numel(), v[i][0], v[i][1], v[i][2]});
  }
  return read_;
}

int64_t SparsityDiagnostics::KeptBytes() const {
  int64_t bytes = 0;
  for (const Layer& layer : layers_) {
    if (layer.previous_kept.defined()) bytes += layer.previous_kept.numel();
  }
  return bytes;
}

}  // namespace nmsparse
