#include "report/run_facts.h"

#include <cmath>
#include <limits>
#include <string>

#include "contract/metric_names.h"
#include "schemas/model_catalog.h"
#include "schemas/model_flops.h"
#include "schemas/model_resolution.h"
#include "schemas/sparsity_config.h"

namespace nmsparse::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Value(const google::protobuf::Map<std::string, double>& values, const std::string& key) {
  auto it = values.find(key);
  return it == values.end() ? kNaN : it->second;
}

double CountInferenceFlops(const ExperimentConfig& spec) {
  absl::StatusOr<ModelArch> arch = ResolveModel(spec.model);
  if (!arch.ok()) return kNaN;
  return ForwardFlopsAt(*arch, spec.sparsity.locations, FinalDensity(spec.sparsity));
}

}  // namespace

double DensityOf(const SparsityConfig& s) {
  if (s.sparsity_type == SparsityType::kDense || s.nm.m == 0) return 1.0;
  return static_cast<double>(s.nm.n) / s.nm.m;
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
  const absl::StatusOr<ExperimentConfig> spec = RunSpec(run);
  return spec.ok() ? CountInferenceFlops(*spec) : kNaN;
}

}  // namespace nmsparse::report
