// Parsing an experiment spec: the nested form key by key on the key table (schemas/experiment_keys.cc), or
// a flat reference config.
#include "schemas/experiment_config.h"

#include "schemas/reference_config.h"
#include "schemas/spec_keys.h"
#include "schemas/spec_text.h"
#include "schemas/yaml_util.h"

namespace nmsparse {

bool operator==(const ExperimentConfig& a, const ExperimentConfig& b) { return ExperimentKeys().Equal(a, b); }

absl::StatusOr<ExperimentConfig> ParseExperimentNode(const YAML::Node& node, const std::string& file_name,
                                                     std::vector<std::string>* warnings) {
  if (!node.IsMap()) {
    return yaml_util::WithFile(yaml_util::Error(node, "(top level)", "expected a map of experiment keys"),
                               file_name);
  }
  ExperimentConfig config;
  absl::Status status;
  if (IsFlatReferenceConfig(node)) {
    const size_t before = warnings == nullptr ? 0 : warnings->size();
    absl::StatusOr<ExperimentConfig> flat = ParseReferenceConfig(node, warnings);
    if (flat.ok()) config = *std::move(flat);
    // "line 64: log_wandb: ..." -> "FILE:64: log_wandb: ...", as errors name their place.
    for (size_t i = before; warnings != nullptr && i < warnings->size(); ++i) {
      (*warnings)[i] =
          std::string(yaml_util::WithFile(absl::InvalidArgumentError((*warnings)[i]), file_name).message());
    }
    status = flat.status();
  } else {
    status = ExperimentKeys().Read(node, "", &config);
  }
  if (!status.ok()) return yaml_util::WithFile(status, file_name);
  return config;
}

absl::StatusOr<ExperimentConfig> ParseExperimentYaml(const std::string& text, const std::string& file_name,
                                                     std::vector<std::string>* warnings) {
  auto node = yaml_util::LoadYaml(text, file_name);
  if (!node.ok()) return node.status();
  return ParseExperimentNode(*node, file_name, warnings);
}

absl::StatusOr<ExperimentConfig> LoadExperimentFile(const std::string& path,
                                                    std::vector<std::string>* warnings) {
  auto text = ReadSpecText(path);
  if (!text.ok()) return text.status();
  return ParseExperimentYaml(*text, path, warnings);
}

absl::Status ParseExperimentKey(const YAML::Node& key_node, const YAML::Node& value,
                                ExperimentConfig* config) {
  const std::string name = key_node.as<std::string>();
  const SpecKey<ExperimentConfig>* key = ExperimentKeys().Find(name);
  if (key == nullptr) return UnknownKeyError(key_node, name, ExperimentKeys().Names());
  key->reset(config);
  if (yaml_util::IsNullish(value)) return absl::OkStatus();
  return key->read(value, name, config);
}

YAML::Node ExperimentConfigToYaml(const ExperimentConfig& config) {
  NodeWriter out;
  ExperimentKeys().Write(config, &out);
  return out.root();
}

}  // namespace nmsparse
