// model.initial_checkpoint (timm's initial_checkpoint): a run's first weights from a safetensors file or a
// timm / Hugging Face folder (config.json + model.safetensors), with timm's loading semantics
// (timm/models/_builder.py load_pretrained and vision_transformer.py checkpoint_filter_fn):
// - strict: a model parameter the file lacks, a tensor the model has no parameter for, and a shape that
//   differs are refused, each named with both shapes;
// - the classifier (ViT's head, SwinV2's head.fc) is dropped and left re-initialised when its number of
//   classes differs, which is logged;
// - ViT's pos_embed is resampled as timm's resample_abs_pos_embed does when the patch grid differs (bicubic,
//   antialias as timm's filter passes it, the class token kept);
// - SwinV2's non-persistent tables (relative_position_index, relative_coords_table, attn_mask) in older files
//   are skipped, as timm's filter does: the model computes its own.
// A torch.save file (.pth, .pt, .bin) is refused with the timm command that converts it: its pickle cannot be
// read reliably from C++ across torch versions.
#ifndef NMSPARSE_WORKER_TRAINER_INTEROP_INITIAL_WEIGHTS_H_
#define NMSPARSE_WORKER_TRAINER_INTEROP_INITIAL_WEIGHTS_H_

#include <torch/nn/module.h>

#include <ostream>
#include <string>

#include "schemas/model_catalog.h"

namespace nmsparse {

// The safetensors file `path` names (the folder's model.safetensors for a folder). TrainerError(kExitUsage)
// naming the path for a torch.save file or a folder without one.
std::string InitialWeightsFile(const std::string& path);

// Loads `path` into `model` (built for `arch`, on the CPU, before the sparsity method reads its weights).
// Throws TrainerError(kExitUsage) naming the file and every mismatch; writes what it adapted to `log`.
void LoadInitialWeights(const std::string& path, const ModelArch& arch, torch::nn::Module& model,
                        std::ostream& log);

// timm's resample_abs_pos_embed: [1, prefix + old*old, D] -> [1, prefix + new_grid*new_grid, D].
torch::Tensor ResampleAbsPosEmbed(const torch::Tensor& pos_embed, int64_t new_grid,
                                  int64_t num_prefix_tokens);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_INTEROP_INITIAL_WEIGHTS_H_
