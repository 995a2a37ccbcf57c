#include "report/run_spec.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace nmsparse::report {

absl::StatusOr<ExperimentConfig> RunSpec(const v1::Run& run) {
  const std::string& text = run.resolved_spec();
  if (text.empty()) return absl::NotFoundError("run listed without its spec");
  static absl::Mutex mu;
  static auto* known ABSL_GUARDED_BY(mu) =
      new absl::flat_hash_map<std::string, absl::StatusOr<ExperimentConfig>>();
  {
    absl::MutexLock lock(&mu);
    if (auto it = known->find(text); it != known->end()) return it->second;
  }
  absl::StatusOr<ExperimentConfig> spec = ParseExperimentYaml(text, "run spec");
  absl::MutexLock lock(&mu);
  if (known->size() >= 4096) known->clear();  // Bounded; a report has far fewer distinct specs.
  known->emplace(text, spec);
  return spec;
}

SparsityConfig RunSparsity(const v1::Run& run) {
  absl::StatusOr<ExperimentConfig> spec = RunSpec(run);
  return spec.ok() ? spec->sparsity : SparsityConfig();
}

}  // namespace nmsparse::report
