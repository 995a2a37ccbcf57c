// Conversion between YAML and the v1 protobuf messages by reflection: YAML keys are field names, enums go by
// name (case-insensitive), lists are repeated fields, maps are map fields, nested maps are nested messages.
// An ExperimentConfig travels as an ExperimentSpec that holds its canonical YAML's values, so the wire form
// says exactly what the spec file says.
#ifndef NMSPARSE_SCHEMAS_PROTO_BRIDGE_H_
#define NMSPARSE_SCHEMAS_PROTO_BRIDGE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "nmsparse/v1/experiment.pb.h"
#include "schemas/experiment_config.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

// Fills `message` (cleared first) from a YAML map. Errors are InvalidArgument "line L: key.path: reason" (the
// path is prefixed by `path` when non-empty): unknown fields, wrong types, out-of-range integers, unknown
// enum names.
absl::Status YamlToMessage(const YAML::Node& node, google::protobuf::Message* message,
                           const std::string& path = "");

// A YAML map of `message`: set sub-messages, non-empty repeated and map fields, every number and bool (proto3
// cannot tell 0 from unset, and 0 is meaningful, e.g. weight_decay: 0), non-empty strings, and enums other
// than their 0 (UNSPECIFIED) value, by name.
YAML::Node MessageToYaml(const google::protobuf::Message& message);

// The wire form of a config: its canonical form as an ExperimentSpec, written from the key table through the
// proto descriptor (each key sets the field of its name), so it carries exactly what the canonical YAML says.
v1::ExperimentSpec ToProto(const ExperimentConfig& config);

// A config from the wire: parsed and checked key by key like a spec file (not ValidateExperiment-ed). Errors
// name the key path ("optimizer.beta1: value 1 is out of range: ...").
absl::StatusOr<ExperimentConfig> FromProto(const v1::ExperimentSpec& spec);

// The epochs a run of `spec` trains (TrainedEpochs, schemas/trained_epochs.h), for the coordinator and nmctl
// that hold the wire form; schedule.epochs where the spec does not convert (its check reports why).
int TrainedEpochs(const v1::ExperimentSpec& spec);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_PROTO_BRIDGE_H_
