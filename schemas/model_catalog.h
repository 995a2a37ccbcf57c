// The catalogue of model architectures: every model name a spec may use, its hyper-parameters, and the weight
// shapes of its sparsifiable layers. Plain C++ so that the coordinator can validate N:M against real layer
// shapes (numel % M) without LibTorch; the trainer builds its LibTorch modules from the same ModelArch.
#ifndef NMSPARSE_SCHEMAS_MODEL_CATALOG_H_
#define NMSPARSE_SCHEMAS_MODEL_CATALOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"

namespace nmsparse {

enum class ModelFamily { kVit, kSwinV2 };

// Hyper-parameters named as timm names them (VisionTransformer / SwinTransformerV2 constructor arguments).
struct ModelArch {
  std::string name;
  ModelFamily family = ModelFamily::kVit;
  int img_size = 224;
  int patch_size = 16;
  int in_chans = 3;
  int num_classes = 1000;
  int embed_dim = 768;           // ViT width; SwinV2 width of the first stage.
  int depth = 12;                // ViT only.
  int num_heads = 12;            // ViT only.
  std::vector<int> depths;       // SwinV2 only, one per stage.
  std::vector<int> stage_heads;  // SwinV2 only, one per stage.
  int window_size = 8;           // SwinV2 only.
  // SwinV2 only, one per stage: the window the weights were pre-trained with, which scales the continuous
  // position bias's relative coordinates instead of the window (timm's fine-tune variants); 0 or empty: none.
  std::vector<int> pretrained_window_sizes;
  double mlp_ratio = 4.0;
  bool qkv_bias = true;
  bool class_token = true;  // ViT: timm's cls_token with global_pool "token".
  // The evaluation and normalisation defaults of timm's pretrained cfg (timm 1.0.31), the data keys'
  // defaults (data.crop_pct, interpolation, mean, std).
  double crop_pct = 0.9;
  std::string interpolation = "bicubic";
  std::vector<double> mean = {0.5, 0.5, 0.5};  // timm's IMAGENET_INCEPTION_MEAN (ViT's).
  std::vector<double> std = {0.5, 0.5, 0.5};
};

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

// The architecture of a catalogued model name, with img_size / in_chans / num_classes overridden when the
// arguments are non-zero. NotFound names the model and lists the known ones.
absl::StatusOr<ModelArch> LookupModel(const std::string& name, int img_size = 0, int in_chans = 0,
                                      int num_classes = 0);

// The catalogue entry of `name` as listed, or nullptr.
const ModelArch* FindModel(const std::string& name);

// Every catalogued model name, sorted.
std::vector<std::string> ModelNames();

// Every weight of `arch` at the given sparsity locations, in module order.
std::vector<LayerShape> SparsifiableLayers(const ModelArch& arch, const std::vector<SparsityLocation>& locs);

// One parameter of a model (not a buffer), named and shaped as timm names it.
struct ParameterShape {
  std::string name;
  std::vector<int64_t> shape;
  int64_t numel() const;
};

// Every parameter of `arch` in LibTorch's named_parameters() order (a module's own parameters, then its
// children's in registration order), exactly as the trainer's models register them.
std::vector<ParameterShape> ModelParameters(const ModelArch& arch);

// Parameter count of the model as timm counts it (the sum over ModelParameters).
int64_t ParameterCount(const ModelArch& arch);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_MODEL_CATALOG_H_
