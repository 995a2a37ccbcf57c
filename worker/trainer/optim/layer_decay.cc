#include "worker/trainer/optim/layer_decay.h"

#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <stdexcept>

namespace nmsparse {
namespace {

using SortKey = std::vector<double>;

// timm's _get_grouping: the first rule matching at the start of `name` gives (group, captures..., suffix...);
// names no rule matches sort after every other (timm's (inf,)).
SortKey GroupingOf(const std::string& name, const LayerGroupMatcher& matcher,
                   const std::vector<std::regex>& compiled) {
  for (size_t i = 0; i < matcher.size(); ++i) {
    std::smatch match;
    if (!std::regex_search(name, match, compiled[i], std::regex_constants::match_continuous)) continue;
    SortKey key{static_cast<double>(matcher[i].group)};
    for (size_t g = 1; g < match.size(); ++g) key.push_back(std::stod(match[g].str()));
    key.insert(key.end(), matcher[i].suffix.begin(), matcher[i].suffix.end());
    return key;
  }
  return {std::numeric_limits<double>::infinity()};
}

}  // namespace

std::vector<int> LayerIds(const std::vector<std::string>& names, const LayerGroupMatcher& matcher) {
  std::vector<std::regex> compiled;
  for (const LayerGroupRule& rule : matcher) compiled.emplace_back(rule.pattern, std::regex::ECMAScript);
  std::vector<SortKey> keys;
  std::map<SortKey, int> layer_of;  // Sorted as Python sorts tuples: lexicographically, prefixes first.
  for (const std::string& name : names) {
    keys.push_back(GroupingOf(name, matcher, compiled));
    layer_of[keys.back()] = 0;
  }
  int layer = -1;
  for (auto& [key, id] : layer_of) {
    if (layer < 0 || key.back() != kMatchPreviousGroup) ++layer;
    id = layer;
  }
  std::vector<int> out;
  for (const SortKey& key : keys) out.push_back(layer_of.at(key));
  return out;
}

std::vector<double> LayerScales(int num_layers, double layer_decay) {
  std::vector<double> scales;
  for (int l = 0; l < num_layers; ++l) scales.push_back(std::pow(layer_decay, num_layers - 1 - l));
  return scales;
}

}  // namespace nmsparse
