// What the figures read off one run: its recipe, its N:M as a density, and its FLOPs.
#ifndef NMSPARSE_REPORT_RUN_FACTS_H_
#define NMSPARSE_REPORT_RUN_FACTS_H_

#include <string>

#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::report {

// The paper's recipe name of a sparsity spec (the names of schemas/recipe.h): DENSE, SRSTE, SDGF (structure
// decay), MDGF (EXP or LINEAR mask decay), STE (N:M without decay), UNSTRUCTURED.
std::string RecipeOf(const v1::SparsitySpec& sparsity);

// The fraction of weights kept at the sparsified locations: N/M, 1 for dense.
double DensityOf(const v1::SparsitySpec& sparsity);

// The run's final value of `metric`, or NaN when it has none (not succeeded, or not reported).
double FinalMetric(const v1::Run& run, const std::string& metric);

// Training FLOPs of the run: the trainer's final `flops` (3x forward per image seen, dense-equivalent;
// schemas/model_flops.h). NaN when not reported.
double TrainingFlops(const v1::Run& run);

// The model's parameters as the trainer reports them (final `params`). NaN when not reported.
double ReportedParameters(const v1::Run& run);

// Forward FLOPs of one image at the run's final N:M: the model's dense forward FLOPs (schemas/model_flops.h)
// less the multiply-adds that the pruned weights at the spec's sparsity locations skip. ViT only, where
// every block sees the same tokens; for other families the dense count. NaN for an unknown model.
double InferenceFlops(const v1::Run& run);
// The same count from a spec's model and sparsity sections alone (what InferenceFlops falls back to).
double SpecInferenceFlops(const v1::ModelSpec& model, const v1::SparsitySpec& sparsity);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_RUN_FACTS_H_
