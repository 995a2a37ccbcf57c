// model.initial_checkpoint (timm's initial_checkpoint): a run's first weights from a safetensors file, a
// torch.save file (.pth, .bin; the state dict unwrapped from state_dict_ema, model_ema, state_dict or model
// as timm's load_state_dict does, torch_save.h) or a timm / Hugging Face folder (config.json +
// model.safetensors or pytorch_model.bin), with timm's loading semantics (timm/models/_builder.py
// load_pretrained and vision_transformer.py checkpoint_filter_fn):
// - strict: a model parameter the file lacks, a tensor the model has no parameter for, and a shape that
//   differs are refused, each named with both shapes;
// - the classifier (ViT's head, SwinV2's head.fc) is dropped and left re-initialised when its number of
//   classes differs, which is logged;
// - ViT's pos_embed is resampled as timm's resample_abs_pos_embed does when the patch grid differs (bicubic,
//   antialias as timm's filter passes it, the class token kept);
// - the patch embedding's kernel (patch_embed.proj.weight) is resampled to the model's patch size as timm's
//   resample_patch_embed does (ViT's and SwinV2's checkpoint_filter_fn), logged;
// - the first conv's input channels (patch_embed.proj.weight) are adapted to the model's in_chans as timm's
//   adapt_input_conv does, logged;
// - SwinV2's non-persistent tables (relative_position_index, relative_coords_table, attn_mask) in older files
//   are skipped, as timm's filter does: the model computes its own.
// A torch.save file that cannot be read from C++ (the legacy non-zip format, a pickled nn.Module) is refused
// with the command that converts it.
#ifndef NMSPARSE_WORKER_TRAINER_INTEROP_INITIAL_WEIGHTS_H_
#define NMSPARSE_WORKER_TRAINER_INTEROP_INITIAL_WEIGHTS_H_

#include <torch/nn/module.h>

#include <ostream>
#include <string>

#include "schemas/model_catalog.h"

namespace nmsparse {

// The weights file `path` names (a folder's model.safetensors, else its pytorch_model.bin).
// TrainerError(kExitUsage) naming the path for a folder with neither.
std::string InitialWeightsFile(const std::string& path);

// Loads `path` into `model` (built for `arch`, on the CPU, before the sparsity method reads its weights).
// Throws TrainerError(kExitUsage) naming the file and every mismatch; writes what it adapted to `log`.
// model.initial_checkpoint_sha256: a non-empty `sha256` (the digest the run's spec and content hash were
// made with) must be the SHA-256 of the file's bytes, hashed as they are read for the load (the file is
// read once, and held in memory while it is parsed); else TrainerError(kExitUsage) naming the file and both
// digests, before any weight is loaded. An empty one (a spec run by hand) checks nothing.
void LoadInitialWeights(const std::string& path, const ModelArch& arch, torch::nn::Module& model,
                        std::ostream& log, const std::string& sha256 = "");

// timm's resample_abs_pos_embed: [1, prefix + old*old, D] -> [1, prefix + new_grid*new_grid, D].
torch::Tensor ResampleAbsPosEmbed(const torch::Tensor& pos_embed, int64_t new_grid,
                                  int64_t num_prefix_tokens);

// timm's resample_patch_embed (timm/layers/patch_embed.py): [O, I, h, w] -> [O, I, new_h, new_w] through the
// pseudo-inverse of the bicubic (antialiased) resize, so that the new kernel on a resized patch gives what
// the old one gave on the patch (FlexiViT).
torch::Tensor ResamplePatchEmbed(const torch::Tensor& weight, int64_t new_h, int64_t new_w);

// timm's adapt_input_conv (timm/models/_manipulate.py) for a plain conv stem, whose source channel count is
// the weight's own ([O, I, kh, kw]): into 1 channel the I channels are summed; into C others they are
// repeated ceil(C/I) times, cut to C and scaled by I/C.
torch::Tensor AdaptInputConv(int64_t in_chans, const torch::Tensor& weight);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_INTEROP_INITIAL_WEIGHTS_H_
