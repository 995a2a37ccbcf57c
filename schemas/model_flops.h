// Analytic FLOP counts of a model, read from its geometry (schemas/model_geometry.h). A multiply-add counts
// as 2 FLOPs. Counted: every matmul of the forward pass at its dense size (patch projection, qkv, attention
// scores and weighted sum, attn proj, MLP, SwinV2 patch merging and cpb_mlp, head); not counted: norms,
// softmax, activations, biases. ViT-B/16 at 224: 35.1 GFLOPs forward.
//
// By what a recipe computes (docs/sparsity-method.md §10): every GEMM of a training step is counted three
// times: forward (X W~ᵀ), input gradient (dY W~) and weight gradient (dYᵀ X). The first two multiply W~ and
// so run at the step's GEMM density of the layer (N/M under a hard mask, 1 while W~ is dense: dense phases
// and MDGF's D(j) > 0); the weight gradient is dense (STE, SR-STE and MDGF hand W the dense gradient) except
// where MVUE 2:4 prunes dY^T (HU24, SSTE: GemmDensity::weight_gradient). Everything outside the sparse
// locations is dense. Plain C++: nmctl and nmserver report it.
#ifndef NMSPARSE_SCHEMAS_MODEL_FLOPS_H_
#define NMSPARSE_SCHEMAS_MODEL_FLOPS_H_

#include <vector>

#include "schemas/gemm_density.h"
#include "schemas/model_arch.h"
#include "schemas/sparsity_config.h"

namespace nmsparse {

// One image's dense forward pass.
double ForwardFlops(const ModelArch& arch);

// The dense training cost of an image: 3x its forward cost (forward + backward of activations and weights).
inline double TrainingFlopsPerImage(const ModelArch& arch) { return 3.0 * ForwardFlops(arch); }

// The density of the model a run ends with: its target N/M at each location (SR-STE, STE, MDGF and SDGF
// alike), 1 - prune_rate for static UNSTRUCTURED, 1 for dense and dynamic runs. Its inference FLOPs are
// ForwardFlopsAt(arch, config.locations, FinalDensity(config)), as the paper's tables count them.
GemmDensity FinalDensity(const SparsityConfig& config);

// Forward FLOPs per image of the GEMMs of the weights at `locations`, at their dense size.
double SparsifiableForwardFlops(const ModelArch& arch, const std::vector<SparsityLocation>& locations);

// One image's forward pass with the weights at `locations` multiplied at `density` (inference FLOPs).
double ForwardFlopsAt(const ModelArch& arch, const std::vector<SparsityLocation>& locations,
                      const GemmDensity& density);

// One image's training step: 3 x the dense forward, less the skipped forward and input-gradient work and
// the skipped weight-gradient work (at density.weight_gradient).
double TrainingFlopsPerImageAt(const ModelArch& arch, const std::vector<SparsityLocation>& locations,
                               const GemmDensity& density);

// The same for dynamic sparsity, whose densities are per parameter: each matmul named by a weight in
// `densities` runs its forward and input gradient at its `forward` density and its weight gradient at its
// `weight_gradient` density; the rest is dense.
double TrainingFlopsPerImageByParameter(const ModelArch& arch,
                                        const std::vector<ParameterDensity>& densities);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_MODEL_FLOPS_H_
