#include "schemas/base_spec.h"

#include <set>
#include <string>
#include <vector>

#include "schemas/semi_structured_config.h"
#include "schemas/sweep.h"

namespace nmsparse {
namespace {

// The top-level keys (name, seed, model, ..., sparsity) that `overrides` set or reach into.
std::set<std::string> TouchedKeys(const Overrides& overrides) {
  std::set<std::string> keys;
  for (const auto& [key_path, value] : overrides) keys.insert(key_path.substr(0, key_path.find('.')));
  return keys;
}

// `section` without `key`, in its order.
YAML::Node Without(const YAML::Node& section, const std::string& key) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : section) {
    if (kv.first.as<std::string>() != key) out[kv.first] = kv.second;
  }
  return out;
}

}  // namespace

YAML::Node BaseSpecNode(const ExperimentConfig& config) {
  YAML::Node node = ExperimentConfigToYaml(config);
  if (!config.semi_structured.Enabled() && !(config.semi_structured == SemiStructuredConfig()))
    node["semi_structured"] = SemiStructuredConfigToYaml(config.semi_structured);
  const absl::StatusOr<ExperimentConfig> full = ParseExperimentNode(node, "");
  if (!full.ok()) return node;
  std::vector<std::string> sections;
  for (const auto& kv : node) {
    if (kv.second.IsMap()) sections.push_back(kv.first.as<std::string>());
  }
  for (const std::string& name : sections) {
    std::vector<std::string> keys;
    for (const auto& kv : node[name]) keys.push_back(kv.first.as<std::string>());
    for (const std::string& key : keys) {
      const YAML::Node kept = YAML::Clone(node[name]);
      node[name] = Without(kept, key);
      const absl::StatusOr<ExperimentConfig> parsed = ParseExperimentNode(node, "");
      if (!parsed.ok() || !(*parsed == *full)) node[name] = kept;
    }
  }
  return node;
}

std::string BaseSpecYaml(const ExperimentConfig& config) {
  YAML::Emitter out;
  out << BaseSpecNode(config);
  return std::string(out.c_str()) + "\n";
}

BaseSpec::BaseSpec(const YAML::Node& base) : node_(base), parsed_(ParseExperimentNode(base, "")) {}

absl::StatusOr<ExperimentConfig> BaseSpec::WithOverrides(const Overrides& overrides) const {
  // The touched keys of the base (all of them when it does not parse alone), in the base's order; keys the
  // base lacks are appended by ApplyOverride in the order it meets them, as in the whole spec.
  const std::set<std::string> touched = TouchedKeys(overrides);
  YAML::Node partial(YAML::NodeType::Map);
  for (const auto& kv : node_) {
    const std::string key = kv.first.as<std::string>();
    if (!parsed_.ok() || touched.count(key) > 0) partial[key] = YAML::Clone(kv.second);
  }
  for (const auto& [key, value] : overrides) {
    if (auto st = ApplyOverride(partial, key, value); !st.ok()) return st;
  }
  ExperimentConfig config = parsed_.ok() ? *parsed_ : ExperimentConfig();
  for (const auto& kv : partial) {
    if (auto st = ParseExperimentKey(kv.first, kv.second, &config); !st.ok()) return st;
  }
  return config;
}

}  // namespace nmsparse
