// Wire version 1's bytes of a spec (the frozen ExperimentSpec of proto/nmsparse/legacy/), made the generic
// way from the spec's YAML, for the tests that pin ExpandSweep's output as it was when runs travelled that
// way.
#ifndef NMSPARSE_SCHEMAS_TESTING_LEGACY_WIRE_H_
#define NMSPARSE_SCHEMAS_TESTING_LEGACY_WIRE_H_

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "schemas/experiment_config.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse::testing {

// Fills `message` (cleared first) from a YAML map whose keys are its field names; enums by name.
absl::Status YamlToMessage(const YAML::Node& node, google::protobuf::Message* message,
                           const std::string& path = "");

// The serialized legacy ExperimentSpec of ExperimentConfigToYaml(config): what version 1 sent for the run.
std::string LegacyWireBytes(const ExperimentConfig& config);

}  // namespace nmsparse::testing

#endif  // NMSPARSE_SCHEMAS_TESTING_LEGACY_WIRE_H_
