// The architecture of a model: the hyper-parameters of a catalogued name (schemas/model_catalog.h) after the
// spec's model keys, from which the shapes and FLOPs (schemas/model_geometry.h) and the trainer's LibTorch
// modules (worker/trainer/models/) are built. Plain C++.
#ifndef NMSPARSE_SCHEMAS_MODEL_ARCH_H_
#define NMSPARSE_SCHEMAS_MODEL_ARCH_H_

#include <string>
#include <vector>

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

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_MODEL_ARCH_H_
