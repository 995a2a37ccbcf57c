#include "cli/rank_tag.h"

#include <algorithm>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "schemas/experiment_config.h"

namespace nmsparse::cli {

RankTag::RankTag(int nodes, int ranks_per_node)
    : nodes_(std::max(nodes, 1)), ranks_per_node_(std::max(ranks_per_node, 1)) {}

RankTag RankTag::ForSpec(const std::string& resolved_spec) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentYaml(resolved_spec, "run spec");
  if (!config.ok()) return RankTag();
  return RankTag(config->resources.nodes, config->resources.gpus);
}

std::string RankTag::operator()(uint32_t rank) const {
  if (nodes_ <= 1) return absl::StrCat(rank);
  return absl::StrCat("node", rank / static_cast<uint32_t>(ranks_per_node_), "/rank", rank);
}

}  // namespace nmsparse::cli
