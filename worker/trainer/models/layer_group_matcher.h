// A model's grouping of its parameters into layers, as timm's group_matcher(coarse=False) declares it (a
// dict of regexes whose matches sort into layer order), for layer-wise learning-rate decay
// (worker/trainer/optim/layer_decay.h).
#ifndef NMSPARSE_WORKER_TRAINER_MODELS_LAYER_GROUP_MATCHER_H_
#define NMSPARSE_WORKER_TRAINER_MODELS_LAYER_GROUP_MATCHER_H_

#include <string>
#include <vector>

namespace nmsparse {

// timm's MATCH_PREV_GROUP: a suffix that puts a parameter in the layer of the group sorted before it.
inline constexpr double kMatchPreviousGroup = 99999;

struct LayerGroupRule {
  int group = 0;               // The ordinal of the rule's entry in timm's dict (stem 0, blocks 1).
  std::string pattern;         // ECMAScript regex matched at the start of a name; captures are numbers.
  std::vector<double> suffix;  // Appended after the captures (timm's per-regex suffix tuple).
};

// Rules in timm's order; the first that matches a name decides. Names no rule matches (the head) sort last.
using LayerGroupMatcher = std::vector<LayerGroupRule>;

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_MODELS_LAYER_GROUP_MATCHER_H_
