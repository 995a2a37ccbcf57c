// The geometry of a model, walked once per family (ViT, SwinV2): every parameter in LibTorch's
// named_parameters() order with its timm name and shape, and every matmul of one image's forward pass with
// its rows and the sparsity locations its weight's rows fall in. The catalogue's shapes (SparsifiableLayers,
// ModelParameters) and the FLOP count (schemas/model_flops.h) are both read from it; the trainer's modules
// (worker/trainer/models/) register the same parameters (models_test checks it). Plain C++.
#ifndef NMSPARSE_SCHEMAS_MODEL_GEOMETRY_H_
#define NMSPARSE_SCHEMAS_MODEL_GEOMETRY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "schemas/model_arch.h"
#include "schemas/sparsity_config.h"

namespace nmsparse {

// One parameter of a model (not a buffer), named and shaped as timm names it.
struct ParameterShape {
  std::string name;
  std::vector<int64_t> shape;
  int64_t numel() const;
};

// One matmul of one image's forward pass: `rows` rows (tokens, or position-table entries) of `macs_per_row`
// multiply-adds, 2 FLOPs each. A weight's matmul names the weight and has its numel as macs_per_row; a
// product of activations (attention's q kᵀ and attn v) names its module and has no weight shape.
struct MatMul {
  std::string name;  // "blocks.3.mlp.fc1.weight", or "blocks.3.attn".
  std::vector<int64_t> weight_shape;
  int64_t rows = 0;
  int64_t macs_per_row = 0;
  // The sparsity locations of the weight's rows, in equal row blocks: one for a sparsifiable weight; Q, K
  // and V for the fused qkv; empty for the rest.
  std::vector<SparsityLocation> locations;
};

struct ModelGeometry {
  std::vector<ParameterShape> parameters;  // named_parameters() order.
  std::vector<MatMul> matmuls;             // Forward order.
};

ModelGeometry Geometry(const ModelArch& arch);

// One weight that a sparsity location can cover, named by its timm parameter name (e.g.
// "blocks.3.mlp.fc1.weight", "layers.1.blocks.0.attn.qkv.weight"). A fused qkv weight appears three times,
// once per Q, K, V block, each with the block's own [dim, dim] shape and `row_offset` into the fused weight.
struct LayerShape {
  std::string name;
  SparsityLocation location = SparsityLocation::kFF;
  std::vector<int64_t> shape;  // [out, in] or [O, I, kh, kw].
  int64_t row_offset = 0;
  int64_t numel() const;
};

// Every weight of `arch` at the given sparsity locations, in module order.
std::vector<LayerShape> SparsifiableLayers(const ModelArch& arch, const std::vector<SparsityLocation>& locs);

// Every parameter of `arch` in LibTorch's named_parameters() order (a module's own parameters, then its
// children's in registration order), exactly as the trainer's models register them.
std::vector<ParameterShape> ModelParameters(const ModelArch& arch);

// Parameter count of the model as timm counts it (the sum over ModelParameters).
int64_t ParameterCount(const ModelArch& arch);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_MODEL_GEOMETRY_H_
