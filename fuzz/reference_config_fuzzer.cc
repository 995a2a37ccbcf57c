// Fuzzes the loader of flat reference (timm train.py) configs, given any YAML map that its one caller
// (ParseExperimentNode) would give it, a map with a scalar `model`: the mapping of its keys, the
// learning-rate scaling and the warnings. Other inputs are the YAML and nested parsers' business
// (experiment_yaml_fuzzer).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "schemas/reference_config.h"
#include "yaml-cpp/yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  YAML::Node node;
  try {
    node = YAML::Load(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const YAML::Exception&) {
    return 0;
  }
  if (!nmsparse::IsFlatReferenceConfig(node)) return 0;
  std::vector<std::string> warnings;
  const absl::StatusOr<nmsparse::ExperimentConfig> config = nmsparse::ParseReferenceConfig(node, &warnings);
  if (!config.ok()) FUZZ_CHECK(!config.status().message().empty(), "an error without a message");
  return 0;
}
