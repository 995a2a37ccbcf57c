#include "report/run_facts.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "contract/metric_names.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "schemas/model_catalog.h"
#include "schemas/model_flops.h"
#include "schemas/model_resolution.h"
#include "schemas/proto_bridge.h"
#include "schemas/sparsity_config.h"

namespace nmsparse::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Value(const google::protobuf::Map<std::string, double>& values, const std::string& key) {
  auto it = values.find(key);
  return it == values.end() ? kNaN : it->second;
}

// What FinalDensity reads of a sparsity section, taken from the proto as stored (no validation: a run's spec
// was validated at submission). Nullopt when its sparsity_loc does not parse.
std::optional<SparsityConfig> FinalSparsityOf(const v1::SparsitySpec& s) {
  SparsityConfig c;
  switch (s.sparsity_type()) {
    case v1::SparsitySpec::SRSTE:
      c.sparsity_type = SparsityType::kSrste;
      break;
    case v1::SparsitySpec::SSTE:
      c.sparsity_type = SparsityType::kSste;
      break;
    case v1::SparsitySpec::STRUCTURED_NM:
      c.sparsity_type = SparsityType::kStructuredNM;
      break;
    case v1::SparsitySpec::UNSTRUCTURED:
      c.sparsity_type = SparsityType::kUnstructured;
      break;
    default:
      c.sparsity_type = SparsityType::kDense;
  }
  if (s.m_sparsity() > 0) c.nm = {static_cast<int>(s.n_sparsity()), static_cast<int>(s.m_sparsity())};
  c.nm_qkv = s.m_sparsity_qkv() > 0
                 ? NM{static_cast<int>(s.n_sparsity_qkv()), static_cast<int>(s.m_sparsity_qkv())}
                 : c.nm;
  c.prune_rate = s.prune_rate();
  if (s.dynamic_size() > 0) c.dynamic.resize(1);  // Counted dense, whatever its groups.
  absl::StatusOr<std::vector<SparsityLocation>> locations =
      ParseSparsityLocations(s.sparsity_loc().empty() ? "FF" : s.sparsity_loc());
  if (!locations.ok()) return std::nullopt;
  c.locations = *locations;
  return c;
}

// The spec's inference FLOPs: the model section alone, with its model_kwargs, read by the spec's key table.
double CountInferenceFlops(const v1::ModelSpec& model, const v1::SparsitySpec& sparsity) {
  YAML::Node model_only(YAML::NodeType::Map);
  model_only["model"] = MessageToYaml(model);
  absl::StatusOr<ExperimentConfig> spec = ParseExperimentNode(model_only, "run spec");
  if (!spec.ok()) return kNaN;
  absl::StatusOr<ModelArch> arch = ResolveModel(spec->model);
  if (!arch.ok()) return kNaN;
  const std::optional<SparsityConfig> final_sparsity = FinalSparsityOf(sparsity);
  if (!final_sparsity) return kNaN;
  return ForwardFlopsAt(*arch, final_sparsity->locations, FinalDensity(*final_sparsity));
}

// The message's bytes with map entries in key order, so that equal messages give equal bytes.
std::string DeterministicBytes(const google::protobuf::Message& m) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream out(&stream);
  out.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&out);
  return bytes;
}

}  // namespace

std::string RecipeOf(const v1::SparsitySpec& s) {
  switch (s.sparsity_type()) {
    case v1::SparsitySpec::SRSTE:
      return "SRSTE";
    case v1::SparsitySpec::SSTE:
      return "SSTE";
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
  return SpecInferenceFlops(run.spec().model(), run.spec().sparsity());
}

double SpecInferenceFlops(const v1::ModelSpec& model, const v1::SparsitySpec& sparsity) {
  // A pure function of the two sections, and a sweep's runs share few of them (a grid over learning rates
  // and seeds has one), while reading a model section costs about 100 us: remembered by their bytes.
  static absl::Mutex mu;
  static auto* known ABSL_GUARDED_BY(mu) = new absl::flat_hash_map<std::string, double>();
  const std::string key = absl::StrCat(DeterministicBytes(model), "/", DeterministicBytes(sparsity));
  {
    absl::MutexLock lock(&mu);
    if (auto it = known->find(key); it != known->end()) return it->second;
  }
  const double flops = CountInferenceFlops(model, sparsity);
  absl::MutexLock lock(&mu);
  if (known->size() >= 4096) known->clear();  // Bounded; a sweep has far fewer distinct sections.
  known->emplace(key, flops);
  return flops;
}

}  // namespace nmsparse::report
