// Analytic FLOP counts from a ModelArch (no LibTorch). A multiply-add counts as 2 FLOPs. Counted: every
// matmul of the forward pass at its dense size (patch projection, qkv, attention scores and weighted sum,
// attn proj, MLP, SwinV2 patch merging and cpb_mlp, head); not counted: norms, softmax, activations, biases.
// The dense training cost of an image is 3x its forward cost (forward + backward of activations and
// weights); training_flops.h counts sparse layers by what each recipe computes (docs/sparsity-method.md §10).
// ViT-B/16 at 224: 35.1 GFLOPs forward.
#ifndef NMSPARSE_WORKER_TRAINER_FLOPS_H_
#define NMSPARSE_WORKER_TRAINER_FLOPS_H_

#include <cstdint>

#include "schemas/model_catalog.h"

namespace nmsparse {

double ForwardFlops(const ModelArch& arch);
inline double TrainingFlopsPerImage(const ModelArch& arch) { return 3.0 * ForwardFlops(arch); }

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_FLOPS_H_
