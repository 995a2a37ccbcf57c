#include "server/sweeps/schemas_expander.h"

#include <algorithm>
#include <utility>

#include "common/status_macros.h"
#include "schemas/initial_weights_digest.h"
#include "schemas/sweep.h"

namespace nmsparse::server {

absl::StatusOr<std::vector<NewRun>> ExpandWithSchemas(const v1::SweepSpec& spec) {
  NM_ASSIGN_OR_RETURN(std::vector<ResolvedRun> resolved, ExpandSweep(spec));
  std::vector<NewRun> out;
  out.reserve(resolved.size());
  for (ResolvedRun& r : resolved) {
    // Every stored run with initial weights has their digest in its hash: the coordinator cannot read them.
    if (absl::Status st = RequireInitialWeightsDigest(r.config); !st.ok())
      return RunError(r.index, r.labels, st);
    NewRun& run = out.emplace_back();
    run.index = static_cast<uint32_t>(r.index);
    for (const auto& [axis, label] : r.labels) run.labels.emplace_back(axis, label);
    run.content_hash = std::move(r.content_hash);
    run.legacy_content_hash = std::move(r.legacy_content_hash);
    run.resolved_spec = std::move(r.canonical_yaml);
    run.gpus = static_cast<uint32_t>(r.config.resources.gpus);
    run.nodes = static_cast<uint32_t>(std::max(1, r.config.resources.nodes));
  }
  return out;
}

}  // namespace nmsparse::server
