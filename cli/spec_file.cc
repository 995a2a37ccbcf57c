#include "cli/spec_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "schemas/experiment_config.h"
#include "schemas/proto_bridge.h"
#include "schemas/spec_text.h"
#include "schemas/sweep.h"

namespace nmsparse::cli {
namespace {

// A sweep file has a base (inline or in another file) or axes; anything else is one experiment.
bool IsSweepText(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return true;  // Let the sweep parser report what is wrong.
    for (const char* key : {"base", "base_file", "grid", "random"}) {
      if (root[key]) return true;
    }
    return false;
  } catch (const YAML::Exception&) {
    return true;  // Not YAML: the sweep parser words the error.
  }
}

std::string FileStem(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  const size_t dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

absl::Status ApplySet(const std::string& assignment, v1::ExperimentSpec* base) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--set ", assignment, ": expected key.path=value"));
  }
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  YAML::Node node = MessageToYaml(*base);
  absl::Status status = ApplyOverride(node, key, value);
  // The spec key table checks the value first (schedule.epochs=-1 and =0 both read "must be >= 1"), as for
  // the file's own keys; the proto's field types (uint32) would word a narrower rule of their own.
  if (status.ok()) status = ParseExperimentNode(node, "").status();
  if (status.ok()) status = YamlToMessage(node, base);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("--set ", assignment, ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::SweepSpec> LoadSpecFile(const std::string& path, const std::vector<std::string>& sets,
                                           std::vector<std::string>* warnings) {
  // Read once, bounded by the spec file size limit before any parsing.
  absl::StatusOr<std::string> text = ReadSpecText(path);
  if (!text.ok()) return text.status();
  v1::SweepSpec spec;
  if (IsSweepText(*text)) {
    absl::StatusOr<v1::SweepSpec> sweep = ParseSweepYaml(*text, path, warnings);
    if (!sweep.ok()) return sweep.status();
    spec = *std::move(sweep);
  } else {
    absl::StatusOr<ExperimentConfig> config = ParseExperimentYaml(*text, path, warnings);
    if (!config.ok()) return config.status();
    spec.set_name(config->name.empty() ? FileStem(path) : config->name);
    *spec.mutable_base() = ToProto(*config);
  }
  // As for sweep axes: a new N:M carries over to Q/K/V when the base had the same ratio there and the Q/K/V
  // keys are not set themselves.
  const v1::SparsitySpec& before = spec.base().sparsity();
  const bool qkv_follows = before.n_sparsity_qkv() == before.n_sparsity() &&
                           before.m_sparsity_qkv() == before.m_sparsity() &&
                           std::none_of(sets.begin(), sets.end(), [](const std::string& s) {
                             return absl::StartsWith(s, "sparsity.n_sparsity_qkv=") ||
                                    absl::StartsWith(s, "sparsity.m_sparsity_qkv=");
                           });
  for (const std::string& assignment : sets) {
    absl::Status status = ApplySet(assignment, spec.mutable_base());
    if (!status.ok()) return status;
  }
  if (qkv_follows && !sets.empty()) {
    v1::SparsitySpec* after = spec.mutable_base()->mutable_sparsity();
    after->set_n_sparsity_qkv(after->n_sparsity());
    after->set_m_sparsity_qkv(after->m_sparsity());
  }
  return spec;
}

}  // namespace nmsparse::cli
