#include "schemas/param_filter.h"

#include <fnmatch.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nmsparse {
namespace {

// A short sample of parameter names for error messages.
std::string Sample(const std::vector<ParamInfo>& params) {
  std::vector<std::string> names;
  for (size_t i = 0; i < params.size() && i < 6; ++i) names.push_back(params[i].name);
  std::string text = absl::StrJoin(names, ", ");
  if (params.size() > names.size()) absl::StrAppend(&text, ", ... (", params.size(), " in all)");
  return text.empty() ? "(the model has no parameters)" : text;
}

}  // namespace

bool GlobMatch(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

bool DefaultParamFilter(const ParamInfo& param) {
  if (param.dim <= 1) return false;
  for (const char* word : {"embedding", "norm", "lm_head", "pos_embed", "cls_token"}) {
    if (param.name.find(word) != std::string::npos) return false;
  }
  return true;
}

bool GroupMatches(const DynamicSparsityGroup& group, const ParamInfo& param) {
  if (group.param_filter.empty()) return DefaultParamFilter(param);
  return std::any_of(group.param_filter.begin(), group.param_filter.end(),
                     [&](const std::string& glob) { return GlobMatch(glob, param.name); });
}

absl::StatusOr<std::vector<int>> AssignParamGroups(const std::vector<ParamInfo>& params,
                                                   const std::vector<DynamicSparsityGroup>& groups,
                                                   const std::string& path) {
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t i = 0; i < groups[g].param_filter.size(); ++i) {
      const std::string& glob = groups[g].param_filter[i];
      const bool any = std::any_of(params.begin(), params.end(),
                                   [&](const ParamInfo& p) { return GlobMatch(glob, p.name); });
      if (!any) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, "[", g, "].param_filter[", i, "]: value '", glob,
                         "' matches no parameter of the model; its parameters: ", Sample(params)));
      }
    }
  }
  std::vector<int> owner(params.size(), -1);
  std::vector<int> count(groups.size(), 0);
  for (size_t p = 0; p < params.size(); ++p) {
    for (size_t g = 0; g < groups.size(); ++g) {
      if (GroupMatches(groups[g], params[p])) {
        owner[p] = static_cast<int>(g);
        ++count[g];
        break;
      }
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    if (count[g] > 0) continue;
    const std::string filter = groups[g].param_filter.empty()
                                   ? "the default filter (more than one dimension; no embedding, norm, "
                                     "lm_head, pos_embed, cls_token)"
                                   : "[" + absl::StrJoin(groups[g].param_filter, ", ") + "]";
    return absl::InvalidArgumentError(
        absl::StrCat(path, "[", g, "].param_filter: ", filter,
                     " matches no parameter left by the groups before it "
                     "(the first matching group takes a parameter); parameters: ",
                     Sample(params)));
  }
  return owner;
}

}  // namespace nmsparse
