#include "worker/sparsity/nm_sparsity_method.h"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "contract/metric_names.h"
#include "worker/sparsity/sparsity_engine.h"

namespace nmsparse {
namespace {

class NMSparsityMethod : public SparsityMethod {
 public:
  explicit NMSparsityMethod(std::unique_ptr<SparsityEngine> engine) : engine_(std::move(engine)) {}

  void BeginStep(int epoch, int64_t global_step) override { engine_->BeginStep(epoch, global_step); }
  // SR-STE's term is added inside the layers' backward; masks follow W at the next forward pass.
  void AfterBackward(int64_t /*global_step*/) override {}
  void AfterOptimizerStep(int64_t /*global_step*/) override {}

  SparsityReport Report(int64_t /*global_step*/, bool per_layer) const override {
    const SparsitySummary summary = engine_->Summary();
    SparsityReport report;
    report.numbers.emplace_back(contract::kDecayValue, summary.decay);
    report.labels = {{contract::kNmStageLabel, summary.nm},
                     {"nm_stage_qkv", summary.nm_qkv},
                     {contract::kPhaseLabel, summary.phase}};
    if (!per_layer) return report;
    for (const LocationReport& location : engine_->ReportByLocation()) {
      report.numbers.emplace_back("sparsity/" + location.location, location.zero_fraction);
      report.numbers.emplace_back("target_sparsity/" + location.location, TargetSparsity(location.target));
    }
    return report;
  }

  // A hard mask (D = 0 as the layers apply it, in float) multiplies the N/M share of W in force; while D > 0,
  // or in a dense phase, W~ is dense.
  GemmDensity ForwardDensity() const override {
    const SparsitySummary summary = engine_->Summary();
    if (summary.phase == "dense" || static_cast<float>(summary.decay) > 0.f) return {};
    return {1.0 - TargetSparsity(summary.nm), 1.0 - TargetSparsity(summary.nm_qkv)};
  }

  bool MaskWeightsAtTarget() override {
    if (engine_->SparseLayerNames().empty()) return false;  // A dense run: its model is the deployed one.
    engine_->MaskWeightsAtTarget();
    return true;
  }

  NamedTensors StateDict() const override { return {}; }  // Everything follows from (epoch, step) and W.

  absl::Status LoadStateDict(const NamedTensors& state) override {
    if (state.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("the checkpoint holds ", state.size(),
                                                   " dynamic sparsity mask(s) (e.g. ", state.front().first,
                                                   ") but this spec has no sparsity.dynamic"));
  }

  // Walks the epochs and lists the per-layer rules wherever the phase or the N:M stage changes.
  std::string Describe(int total_epochs, int64_t steps_per_epoch) override {
    std::ostringstream out;
    // The list below has one line per sparsified weight block: a fused qkv weight is one layer with up to
    // three blocks (Q, K, V), so the two counts differ and both are said.
    const size_t layers = engine_->SparseLayerNames().size(), blocks = engine_->Report().size();
    out << "sparse layers: " << layers;
    if (blocks != layers)
      out << " (" << blocks << " weight blocks below: a fused qkv weight counts once per block)";
    out << "\n";
    std::string previous;
    for (int epoch = 0; epoch < total_epochs; ++epoch) {
      engine_->BeginStep(epoch, epoch * steps_per_epoch);
      const SparsitySummary s = engine_->Summary();
      const std::string key = s.phase + " " + s.nm + " " + s.nm_qkv;
      if (key == previous) continue;
      previous = key;
      out << "from epoch " << epoch << ": phase " << s.phase << ", N:M " << s.nm << " (qkv " << s.nm_qkv
          << ")\n";
      for (const SparseLayerReport& layer : engine_->Report()) {
        out << "  " << layer.name << " [" << layer.location << "] " << absl::StrJoin(layer.shape, "x")
            << " -> " << layer.target << "\n";
      }
    }
    return out.str();
  }

 private:
  std::unique_ptr<SparsityEngine> engine_;
};

}  // namespace

double TargetSparsity(const std::string& target) {
  std::vector<std::string> nm = absl::StrSplit(target, ':');
  double n = 0, m = 0;
  if (nm.size() == 2 && absl::SimpleAtod(nm[0], &n) && absl::SimpleAtod(nm[1], &m) && m > 0)
    return 1.0 - n / m;
  std::vector<std::string> words = absl::StrSplit(target, ' ');
  double rate = 0;
  if (words.size() == 2 && words[0] == "unstructured" && absl::SimpleAtod(words[1], &rate)) return rate;
  return 0.0;
}

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateSteTwoFourEngine(const SparsityConfig& config,
                                                                       torch::nn::Module& model,
                                                                       const SparsityMethodOptions& options) {
  SparsityConfig engine_config = config;
  engine_config.sparsity_type = SparsityType::kStructuredNM;
  engine_config.decay_type = DecayType::kStep;
  return CreateNMSparsityMethod(engine_config, options.total_epochs(), options.steps_per_epoch(), model,
                                options.span_epochs(), torch::Tensor());
}

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateNMSparsityMethod(
    const SparsityConfig& config, int total_epochs, int64_t steps_per_epoch, torch::nn::Module& model,
    int span_epochs, const torch::Tensor& srste_term_scale) {
  auto engine =
      SparsityEngine::Create(config, total_epochs, steps_per_epoch, model, span_epochs, srste_term_scale);
  if (!engine.ok()) return absl::InvalidArgumentError(absl::StrCat("sparsity: ", engine.status().message()));
  return std::make_unique<NMSparsityMethod>(std::move(*engine));
}

}  // namespace nmsparse
