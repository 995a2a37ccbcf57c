#include "worker/sparsity/semi_structured/semi_structured_layers_setup.h"

#include <torch/nn/module.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "worker/sparsity/semi_structured/semi_structured_gemm.h"
#include "worker/sparsity/semi_structured/transposable_mask.h"
#include "worker/sparsity/sparse_linear.h"

namespace nmsparse {
namespace {

struct NamedLinear {
  std::string name;
  std::shared_ptr<SparseLinearImpl> module;
};

std::vector<NamedLinear> SparseLinears(torch::nn::Module& model) {
  std::vector<NamedLinear> linears;
  for (const auto& item : model.named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    if (auto linear = std::dynamic_pointer_cast<SparseLinearImpl>(item.value())) {
      linears.push_back({item.key(), linear});
    }
  }
  return linears;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SemiStructuredLayers>> SemiStructuredLayers::Install(
    const SemiStructuredConfig& config, const SparsityConfig& sparsity, int total_epochs,
    int64_t steps_per_epoch, torch::nn::Module& model, const torch::Device& device, int span_epochs) {
  if (!config.Enabled()) return nullptr;
  auto phases = PhaseSchedule::Create(sparsity, total_epochs, span_epochs);
  if (!phases.ok()) return phases.status();
  auto dense_switch = DenseSwitch::Create(config, *phases, steps_per_epoch);
  if (!dense_switch.ok()) return dense_switch.status();
  const std::vector<NamedLinear> modules = SparseLinears(model);
  std::vector<LinearShape> shapes;
  for (const NamedLinear& m : modules) {
    shapes.push_back({m.name, m.module->weight.size(0), m.module->weight.size(1)});
  }
  // Only SparseLinears can take an accelerator: a pattern that matches another module matches "no linear".
  auto chosen = SelectSemiStructuredLayers(config, shapes);
  if (!chosen.ok()) return chosen.status();
  const SemiStructuredGemmOrWhy backend =
      chosen->empty() ? SemiStructuredGemmOrWhy{} : MakeSemiStructuredGemm(device, config);
  std::vector<Layer> layers;
  for (const SemiStructuredChoice& choice : *chosen) {
    std::shared_ptr<SparseLinearImpl> module;
    for (const NamedLinear& m : modules) module = m.name == choice.layer.name ? m.module : module;
    auto linear = std::make_shared<SemiStructuredLinear>(choice.kind, config.mask, backend);
    module->set_accelerator(linear);
    layers.push_back({choice.layer.name, module, std::move(linear)});
  }
  return std::unique_ptr<SemiStructuredLayers>(
      new SemiStructuredLayers(std::move(layers), *dense_switch, backend, config.mask));
}

void SemiStructuredLayers::Prepare(int64_t first_global_step, const std::function<void()>& forward_passes) {
  if (dense_switch_.DenseAt(first_global_step)) return;
  // The transposable mask runs on every path (masked dense too): its tables reach the device now.
  // (The weights' own device: a CUDA tensor's always names its index.)
  if (mask_ == SemiStructuredMask::kTransposable && !layers_.empty()) {
    PrepareTransposableMask(layers_.front().module->weight.device());
  }
  if (backend_.gemm == nullptr) return;
  for (Layer& layer : layers_) layer.linear->set_preparing(true);
  try {
    forward_passes();
  } catch (...) {
    for (Layer& layer : layers_) layer.linear->set_preparing(false);
    throw;
  }
  for (Layer& layer : layers_) layer.linear->set_preparing(false);
}

SemiStructuredLayers::~SemiStructuredLayers() {
  for (Layer& layer : layers_) layer.module->set_accelerator(nullptr);
}

void SemiStructuredLayers::BeginStep(int64_t global_step) {
  const bool dense = dense_switch_.DenseAt(global_step);
  for (Layer& layer : layers_) layer.linear->set_dense(dense);
}

std::vector<SemiStructuredLayerReport> SemiStructuredLayers::Report() const {
  std::vector<SemiStructuredLayerReport> reports;
  for (const Layer& layer : layers_) {
    SemiStructuredPath path = layer.linear->last_path();
    if (path.reason.empty()) path.reason = "not run yet";
    reports.push_back({layer.name, layer.linear->kind(), path});
  }
  return reports;
}

std::string FormatSemiStructuredReport(const SemiStructuredLayerReport& r) {
  const std::string speedup = r.path.speedup > 0 ? absl::StrFormat(" %.2fx", r.path.speedup) : "";
  const char* path = r.path.kernel ? "kernel" : r.path.reason == kDenseAfterReason ? "dense" : "masked dense";
  return absl::StrCat(ToString(r.kind), " ", path, speedup, " (", r.path.reason, ")");
}

}  // namespace nmsparse
