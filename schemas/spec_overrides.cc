#include "schemas/spec_overrides.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "schemas/experiment_config.h"
#include "schemas/proto_bridge.h"
#include "schemas/sweep.h"

namespace nmsparse {
namespace {

absl::Status ApplySet(const std::string& assignment, v1::ExperimentSpec* spec) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--set ", assignment, ": expected key.path=value"));
  }
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  YAML::Node node = MessageToYaml(*spec);
  absl::Status status = ApplyOverride(node, key, value);
  // The spec key table checks the value first (schedule.epochs=-1 and =0 both read "must be >= 1"), as for
  // the file's own keys; the proto's field types (uint32) would word a narrower rule of their own.
  if (status.ok()) status = ParseExperimentNode(node, "").status();
  if (status.ok()) status = YamlToMessage(node, spec);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("--set ", assignment, ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplySetOverrides(const std::vector<std::string>& sets, v1::ExperimentSpec* spec) {
  const v1::SparsitySpec& before = spec->sparsity();
  const bool qkv_follows = before.n_sparsity_qkv() == before.n_sparsity() &&
                           before.m_sparsity_qkv() == before.m_sparsity() &&
                           std::none_of(sets.begin(), sets.end(), [](const std::string& s) {
                             return absl::StartsWith(s, "sparsity.n_sparsity_qkv=") ||
                                    absl::StartsWith(s, "sparsity.m_sparsity_qkv=");
                           });
  for (const std::string& assignment : sets) {
    if (absl::Status status = ApplySet(assignment, spec); !status.ok()) return status;
  }
  if (qkv_follows && !sets.empty()) {
    v1::SparsitySpec* after = spec->mutable_sparsity();
    after->set_n_sparsity_qkv(after->n_sparsity());
    after->set_m_sparsity_qkv(after->m_sparsity());
  }
  return absl::OkStatus();
}

}  // namespace nmsparse
