#include "report/run_facts.h"

#include <cmath>
#include <limits>

#include "contract/metric_names.h"
#include "schemas/model_catalog.h"
#include "schemas/model_resolution.h"
#include "schemas/proto_bridge.h"
#include "schemas/sparsity_config.h"
#include "worker/trainer/flops.h"

namespace nmsparse::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Value(const google::protobuf::Map<std::string, double>& values, const std::string& key) {
  auto it = values.find(key);
  return it == values.end() ? kNaN : it->second;
}

// Multiply-adds of the sparsifiable weights over one image's tokens (ViT): the part N:M can skip.
double SparsifiableFlops(const ModelArch& arch, const std::string& locations_text) {
  absl::StatusOr<std::vector<SparsityLocation>> locations =
      ParseSparsityLocations(locations_text.empty() ? "FF" : locations_text);
  if (!locations.ok()) return 0.0;
  const double grid = arch.img_size / arch.patch_size;
  const double tokens = grid * grid + (arch.class_token ? 1 : 0);
  double weights = 0.0;
  for (const LayerShape& layer : SparsifiableLayers(arch, *locations)) weights += layer.numel();
  return 2.0 * tokens * weights;
}

}  // namespace

std::string RecipeOf(const v1::SparsitySpec& s) {
  switch (s.sparsity_type()) {
    case v1::SparsitySpec::SRSTE:
      return "SRSTE";
    case v1::SparsitySpec::UNSTRUCTURED:
      return "UNSTRUCTURED";
    case v1::SparsitySpec::STRUCTURED_NM:
      if (s.structure_decay_flag()) return "SDGF";
      if (s.decay_type() == v1::SparsitySpec::EXP || s.decay_type() == v1::SparsitySpec::LINEAR)
        return "MDGF";
      return "STE";
    default:
      return "DENSE";
  }
}

double DensityOf(const v1::SparsitySpec& s) {
  const bool dense = s.sparsity_type() == v1::SparsitySpec::DENSE ||
                     s.sparsity_type() == v1::SparsitySpec::SPARSITY_TYPE_UNSPECIFIED;
  if (dense || s.m_sparsity() == 0) return 1.0;
  return static_cast<double>(s.n_sparsity()) / s.m_sparsity();
}

double FinalMetric(const v1::Run& run, const std::string& metric) {
  return run.state() == v1::SUCCEEDED ? Value(run.final_metrics(), metric) : kNaN;
}

double TrainingFlops(const v1::Run& run) { return Value(run.final_metrics(), contract::kFlops); }

double ReportedParameters(const v1::Run& run) { return Value(run.final_metrics(), contract::kParams); }

double InferenceFlops(const v1::Run& run) {
  // The model section alone, with its model_kwargs, read by the spec's key table.
  YAML::Node model_only(YAML::NodeType::Map);
  model_only["model"] = MessageToYaml(run.spec().model());
  absl::StatusOr<ExperimentConfig> spec = ParseExperimentNode(model_only, "run spec");
  if (!spec.ok()) return kNaN;
  absl::StatusOr<ModelArch> arch = ResolveModel(spec->model);
  if (!arch.ok()) return kNaN;
  const double dense = ForwardFlops(*arch);
  if (arch->family != ModelFamily::kVit) return dense;
  const double pruned = 1.0 - DensityOf(run.spec().sparsity());
  return dense - pruned * SparsifiableFlops(*arch, run.spec().sparsity().sparsity_loc());
}

}  // namespace nmsparse::report
