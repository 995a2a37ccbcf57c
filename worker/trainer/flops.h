// Analytic FLOP counts from a ModelArch (no LibTorch). A multiply-add counts as 2 FLOPs. Counted: every
// matmul of the forward pass at its dense size (patch projection, qkv, attention scores and weighted sum,
// attn proj, MLP, SwinV2 patch merging and cpb_mlp, head); not counted: norms, softmax, activations, biases.
// The training cost of an image is taken as 3x its forward cost (forward + backward of activations and
// weights), so training FLOPs so far = 3 * ForwardFlops(arch) * images processed. Sparsity is ignored
// (dense-equivalent). ViT-B/16 at 224: 35.1 GFLOPs forward.
#ifndef NMSPARSE_WORKER_TRAINER_FLOPS_H_
#define NMSPARSE_WORKER_TRAINER_FLOPS_H_

#include <cstdint>

#include "schemas/model_catalog.h"

namespace nmsparse {

double ForwardFlops(const ModelArch& arch);
inline double TrainingFlopsPerImage(const ModelArch& arch) { return 3.0 * ForwardFlops(arch); }

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_FLOPS_H_
