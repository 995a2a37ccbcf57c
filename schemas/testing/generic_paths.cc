#include "schemas/testing/generic_paths.h"

#include "schemas/content_hash.h"
#include "schemas/yaml_util.h"

namespace nmsparse::testing {

std::string CanonicalYamlByEmitter(const ExperimentConfig& config) {
  YAML::Emitter out;
  out << ExperimentConfigToYaml(config);
  return std::string(out.c_str()) + "\n";
}

absl::StatusOr<std::vector<ResolvedRun>> ExpandSweepGeneric(const v1::SweepSpec& sweep) {
  absl::StatusOr<YAML::Node> base = yaml_util::LoadYaml(sweep.base(), "base");
  if (!base.ok()) return base.status();
  std::vector<ResolvedRun> runs;
  for (RunPoint& point : SweepRunPoints(sweep)) {
    ResolvedRun& run = runs.emplace_back();
    run.index = static_cast<int>(runs.size()) - 1;
    run.labels = std::move(point.labels);
    YAML::Node spec = YAML::Clone(*base);
    for (const auto& [key, value] : point.set) {
      if (absl::Status st = ApplyOverride(spec, key, value); !st.ok())
        return RunError(run.index, run.labels, st);
    }
    absl::StatusOr<ExperimentConfig> config = ParseExperimentNode(spec, "");
    if (!config.ok()) return RunError(run.index, run.labels, config.status());
    if (absl::Status valid = ValidateExperiment(*config); !valid.ok())
      return RunError(run.index, run.labels, valid);
    run.config = *std::move(config);
    run.canonical_yaml = CanonicalYamlByEmitter(run.config);
    run.content_hash = Sha256Hex(run.canonical_yaml);
    if (HasReducedIdentity(run.config)) {  // A dense run: hashed without the N:M keys it ignores.
      run.legacy_content_hash = std::move(run.content_hash);
      run.content_hash = ContentHash(run.config);
      if (run.legacy_content_hash == run.content_hash) run.legacy_content_hash.clear();
    }
  }
  return runs;
}

}  // namespace nmsparse::testing
