// The architecture a spec's model section builds: the catalogue entry of model.name with the section's
// overrides (img_size, in_chans, num_classes and timm's model_kwargs) applied. Everything downstream (the
// validation, the layer plan, the trainer's models, the report) reads the model through ResolveModel.
#ifndef NMSPARSE_SCHEMAS_MODEL_RESOLUTION_H_
#define NMSPARSE_SCHEMAS_MODEL_RESOLUTION_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schemas/experiment_config.h"
#include "schemas/model_catalog.h"

namespace nmsparse {

// NotFound for an unknown model.name (listing the known ones); no other check (ValidateModelArch).
absl::StatusOr<ModelArch> ResolveModel(const ModelConfig& model);

// The resolved architecture's consistency and size: family-specific keys, positive sizes, embed_dim per head,
// img_size per patch, SwinV2's windows per stage, and the bounds of schemas/limits.h on parameters and
// FLOPs per image. InvalidArgument naming the key: "model.embed_dim: value 130 is not a multiple of ...".
absl::Status ValidateModelArch(const ModelConfig& model, const ModelArch& arch);

// An upper bound on the forward FLOPs of one image (a multiply-add is 2), as the size check bounds it: the
// trainer's count (schemas/model_flops.h) is at most this (schemas:flops_bound_test).
double ForwardFlopsBound(const ModelArch& arch);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_MODEL_RESOLUTION_H_
