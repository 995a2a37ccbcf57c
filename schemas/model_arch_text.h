// A resolved architecture (schemas/model_resolution.h) as text, one `key: value` line per hyper-parameter
// that shapes the weights, keys named as the spec's model keys. Checkpoints record it and resume compares it
// (worker/trainer/checkpoint/checkpoint_architecture.h); fork compares the parent's and the fork's
// (server/sweeps/run_fork.cc). Two spellings of one model (another catalogue name, a kwarg set to its
// default) give the same text; dropout rates are not part of it.
#ifndef NMSPARSE_SCHEMAS_MODEL_ARCH_TEXT_H_
#define NMSPARSE_SCHEMAS_MODEL_ARCH_TEXT_H_

#include <string>
#include <vector>

#include "schemas/model_catalog.h"

namespace nmsparse {

// "family: vit\nimg_size: 28\npatch_size: 4\n...": the family's keys in a fixed order.
std::string ArchitectureText(const ModelArch& arch);

// A key whose value differs between two architecture texts ("(none)" where one lacks it).
struct ArchitectureDifference {
  std::string key;  // "model.depth"
  std::string before, after;
};

// The keys whose values differ, in `before`'s order then `after`'s new keys; empty when equal.
std::vector<ArchitectureDifference> ArchitectureDifferences(const std::string& before,
                                                            const std::string& after);

// "model.depth: 6 differs from the checkpoint's 4; model.embed_dim: ..." with before_name "the checkpoint's".
std::string DescribeDifferences(const std::vector<ArchitectureDifference>& differences,
                                const std::string& before_name);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_MODEL_ARCH_TEXT_H_
