// The report's figures of a sweep: learning curves per run, the final metric against density per recipe
// (mean ± std over runs that share recipe and N:M: seeds and random draws), and the final metric against
// training and inference FLOPs with the Pareto front, and against the model's parameters; the sparse layers'
// flip rate and pruned / kept gradient-norm ratio per epoch.
#ifndef NMSPARSE_REPORT_FIGURES_H_
#define NMSPARSE_REPORT_FIGURES_H_

#include <string>
#include <vector>

#include "report/figure.h"
#include "report/sweep_data.h"

namespace nmsparse::report {

// "run 12 recipe=dense nm=2:4": the run id and its labels in axis order, as legends and tables name it.
std::string RunName(const v1::Run& run);

// Train loss against step (step points; epoch points when a run reported none).
Figure LossCurves(const SweepData& data);
// Evaluation `metric` against epoch (epoch points).
Figure EvalCurves(const SweepData& data, const std::string& metric);
// Final `metric` against density N/M: one series per recipe, mean ± sample std per density.
Figure MetricVsDensity(const SweepData& data, const std::string& metric);
// Final `metric` against each numeric grid axis that is neither a replicate nor N:M (a decay coefficient, a
// learning rate), the paper's "accuracy vs decay per recipe": one line per configuration without that axis,
// coloured by recipe, each point the mean ± sample std over the runs that differ only in a seed.
std::vector<Figure> MetricVsAxes(const SweepData& data, const std::string& metric);
// Final `metric` against training FLOPs (training = true) or per-image inference FLOPs: one point series
// per recipe and the Pareto front of all succeeded runs.
Figure MetricVsFlops(const SweepData& data, const std::string& metric, bool training);

// Final `metric` against the model's parameters (the runs' final `params`): one point series per recipe, for
// sweeps over model size.
Figure MetricVsParameters(const SweepData& data, const std::string& metric);

// The sparse layers' diagnostics per run against epoch (docs/sparsity-method.md §11): the mask flip rate
// since the previous log point, and the gradient norm at pruned over that at kept weights. No series for
// runs that report none (dense runs).
Figure FlipRateCurves(const SweepData& data);
Figure PrunedKeptGradientCurves(const SweepData& data);

// All of the above, in the report's order (a final-metric figure is left out when its x takes exactly one
// value), then the search views of a sweep with swept parameters
// (search_views.h).
std::vector<Figure> SweepFigures(const SweepData& data, const std::string& metric);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_FIGURES_H_
