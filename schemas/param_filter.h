// Which dynamic sparsity group (docs/sparsity-method.md §7) each model parameter belongs to. Plain C++: the
// trainer's controller and any validate-only listing share it.
#ifndef NMSPARSE_SCHEMAS_PARAM_FILTER_H_
#define NMSPARSE_SCHEMAS_PARAM_FILTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"

namespace nmsparse {

struct ParamInfo {
  std::string name;  // timm name, e.g. blocks.0.mlp.fc1.weight.
  int64_t dim = 0;   // Number of dimensions.
};

// fnmatch(3) without flags: '*' and '?' also match '.', [...] classes.
bool GlobMatch(const std::string& pattern, const std::string& name);

// The default filter: more than one dimension and a name containing none of embedding, norm, lm_head,
// pos_embed, cls_token.
bool DefaultParamFilter(const ParamInfo& param);

// Whether `group`'s filter (its globs, or the default when it has none) takes `param`.
bool GroupMatches(const DynamicSparsityGroup& group, const ParamInfo& param);

// For each parameter, the index of the first group whose filter matches it, or -1. InvalidArgument, naming
// `path` (e.g. "sparsity.dynamic[1].param_filter[0]") and a few parameter names, when a glob matches no
// parameter or a group ends up with no parameter (all taken by earlier groups).
absl::StatusOr<std::vector<int>> AssignParamGroups(const std::vector<ParamInfo>& params,
                                                   const std::vector<DynamicSparsityGroup>& groups,
                                                   const std::string& path = "sparsity.dynamic");

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_PARAM_FILTER_H_
