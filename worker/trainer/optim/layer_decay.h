// Layer-wise learning-rate decay as timm's param_groups_layer_decay computes it
// (timm/optim/_param_groups.py): a model's group matcher sorts its parameters into layers 0 .. L-1 (timm's
// group_with_matcher), and layer l trains at lr * layer_decay^(L - 1 - l).
#ifndef NMSPARSE_WORKER_TRAINER_OPTIM_LAYER_DECAY_H_
#define NMSPARSE_WORKER_TRAINER_OPTIM_LAYER_DECAY_H_

#include <string>
#include <vector>

#include "worker/trainer/models/layer_group_matcher.h"

namespace nmsparse {

// The layer of each of `names` (in the same order), numbered as timm's group_with_matcher(reverse=True)
// numbers them: the distinct sort keys in ascending order, a key ending in kMatchPreviousGroup sharing the
// layer of the key before it.
std::vector<int> LayerIds(const std::vector<std::string>& names, const LayerGroupMatcher& matcher);

// timm's layer_scales: layer_decay^(num_layers - 1 - l) for each layer l.
std::vector<double> LayerScales(int num_layers, double layer_decay);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_OPTIM_LAYER_DECAY_H_
