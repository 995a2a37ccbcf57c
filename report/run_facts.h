// What the figures read off one run: its N:M as a density, its final metrics and its FLOPs.
#ifndef NMSPARSE_REPORT_RUN_FACTS_H_
#define NMSPARSE_REPORT_RUN_FACTS_H_

#include <string>

#include "nmsparse/v1/sweep.pb.h"
#include "report/run_spec.h"
#include "schemas/sparsity_config.h"

namespace nmsparse::report {

// The fraction of weights kept at the sparsified locations: N/M, 1 for dense.
double DensityOf(const SparsityConfig& sparsity);

// The run's final value of `metric`, or NaN when it has none (not succeeded, or not reported).
double FinalMetric(const v1::Run& run, const std::string& metric);

// Training FLOPs of the run: the trainer's final `flops` (3x forward per image seen, dense-equivalent;
// schemas/model_flops.h). NaN when not reported.
double TrainingFlops(const v1::Run& run);

// The model's parameters as the trainer reports them (final `params`). NaN when not reported.
double ReportedParameters(const v1::Run& run);

// Forward FLOPs of one image at the run's final N:M: the trainer's count (final `inference_flops`) where
// there is one, else the model's dense forward FLOPs (schemas/model_flops.h) less the multiply-adds that
// the pruned weights at the spec's sparsity locations skip. ViT only, where every block sees the same
// tokens; for other families the dense count. NaN for an unknown model or a run without its spec.
double InferenceFlops(const v1::Run& run);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_RUN_FACTS_H_
