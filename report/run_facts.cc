#include "report/run_facts.h"

#include <cmath>
#include <limits>

#include "contract/metric_names.h"
#include "schemas/model_catalog.h"
#include "schemas/model_resolution.h"
#include "schemas/proto_bridge.h"
#include "schemas/sparsity_config.h"
#include "worker/trainer/training_flops.h"

namespace nmsparse::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Value(const google::protobuf::Map<std::string, double>& values, const std::string& key) {
  auto it = values.find(key);
  return it == values.end() ? kNaN : it->second;
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
  // The trainer's count (final line) where there is one; before that, the same count from the spec.
  if (const double reported = Value(run.final_metrics(), contract::kInferenceFlops); std::isfinite(reported))
    return reported;
  // The model and sparsity sections alone, read by the spec's key tables.
  YAML::Node sections(YAML::NodeType::Map);
  sections["model"] = MessageToYaml(run.spec().model());
  sections["sparsity"] = MessageToYaml(run.spec().sparsity());
  absl::StatusOr<ExperimentConfig> spec = ParseExperimentNode(sections, "run spec");
  if (!spec.ok()) return kNaN;
  absl::StatusOr<ModelArch> arch = ResolveModel(spec->model);
  if (!arch.ok()) return kNaN;
  return ForwardFlopsAt(*arch, spec->sparsity.locations, FinalDensity(spec->sparsity));
}

}  // namespace nmsparse::report
