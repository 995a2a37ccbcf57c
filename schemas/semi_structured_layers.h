// Which linears of a catalogued model a spec's semi_structured section chooses, checked against its sparsity
// section: the names `nmctl validate` lists and the trainer installs. Plain C++ (no LibTorch).
#ifndef NMSPARSE_SCHEMAS_SEMI_STRUCTURED_LAYERS_H_
#define NMSPARSE_SCHEMAS_SEMI_STRUCTURED_LAYERS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/model_catalog.h"
#include "schemas/semi_structured_config.h"
#include "schemas/sparsity_config.h"

namespace nmsparse {

// Every linear of `arch` (a 2-D `<module>.weight` parameter), by module name, in module order.
std::vector<LinearShape> ModelLinears(const ModelArch& arch);

// SelectSemiStructuredLayers over ModelLinears(arch), plus: a weight-2:4 layer must be sparsified by the
// engine with 2:4 along in_features over all its rows (all of Q, K and V for a fused qkv), since the 2:4
// kernel runs the engine's own mask; dense_after.phase must index sparsity.phases. InvalidArgument names the
// key and the layer.
absl::StatusOr<std::vector<SemiStructuredChoice>> ChooseSemiStructuredLayers(
    const SemiStructuredConfig& config, const SparsityConfig& sparsity, const ModelArch& arch);

// What `nmtrain --validate-only` prints for the chosen layers: a header line with the section's settings,
// then one line per layer ("  blocks.0.mlp.fc1 weight_2:4 [3072, 768]"); empty when none is chosen.
std::string FormatSemiStructuredChoices(const SemiStructuredConfig& config,
                                        const std::vector<SemiStructuredChoice>& chosen);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SEMI_STRUCTURED_LAYERS_H_
