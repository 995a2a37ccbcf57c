// The groups of dynamic unstructured sparsity (docs/sparsity-method.md §7) in the sparsity section: their
// readers, on the key tables of schemas/sparsity_config.h. Internal to //schemas:sparsity_config.
#ifndef NMSPARSE_SCHEMAS_DYNAMIC_GROUPS_H_
#define NMSPARSE_SCHEMAS_DYNAMIC_GROUPS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

// A list of groups; `path` names the list ("sparsity.dynamic"), each group path[i].
absl::StatusOr<std::vector<DynamicSparsityGroup>> ReadDynamicGroups(const YAML::Node& value,
                                                                    const std::string& path);

// `sparsity: {algorithm: ..., sparsity: ...}`: one group written inline, beside which sparsity_type may only
// say UNSTRUCTURED. `path` is the section's key path ("sparsity"), `prefix` its keys' ("sparsity." or "").
absl::StatusOr<SparsityConfig> ParseInlineGroup(const YAML::Node& node, const std::string& path,
                                                const std::string& prefix);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_DYNAMIC_GROUPS_H_
