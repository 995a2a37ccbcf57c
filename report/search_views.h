// Optuna-dashboard-style views of a search or grid sweep (docs/sweeps.md, "Search views"): the optimisation
// history, parallel coordinates, slices and parameter importances of its objective metric. A swept
// parameter is a grid axis (numeric when every value's label is a number, else categorical over its
// labels) or a random / search axis (uniform, log-uniform or a choice); a run's value of it is its label.
// A trial is a configuration (report/replicates.h): the succeeded runs with a finite final objective that
// differ only in a replicate axis (a seed), its objective their mean, with their sample std and count; a seed
// is never a parameter. Its trial number is its place in the order its first run reached a final state
// (Run.finished_at_ms, then the run id).
#ifndef NMSPARSE_REPORT_SEARCH_VIEWS_H_
#define NMSPARSE_REPORT_SEARCH_VIEWS_H_

#include <string>
#include <vector>

#include "report/figure.h"
#include "report/sweep_data.h"

namespace nmsparse::report {

struct SweptParameter {
  std::string name;                     // The grid axis' name or the random axis' key path.
  bool log = false;                     // Log-uniform: its scale is log10.
  std::vector<std::string> categories;  // Non-empty: categorical, a value is an index into these.
  double low = 0, high = 0;             // The search space's range on its scale (categorical: -0.5, k-0.5).
  // A numeric grid axis's values (its only possible values: the axes' ticks), or a random integer axis's
  // whole numbers over a short range; empty for a continuous range.
  std::vector<double> ticks;
};

// The sweep's swept parameters: grid axes with at least two values, then random axes, in spec order;
// replicate axes (seeds) are not parameters.
std::vector<SweptParameter> SweptParameters(const v1::SweepSpec& spec);

// Each configuration's objective, in trial order, with its first run's id and its value of each parameter on
// the parameter's scale (NaN when its label is missing or not a number).
struct Trials {
  std::vector<int64_t> run_ids;
  std::vector<double> objective;            // The mean over the configuration's runs.
  std::vector<double> spread;               // Their sample std (0 for one run).
  std::vector<int> replicates;              // How many runs.
  std::vector<std::vector<double>> values;  // [parameter][trial].
  bool any_replicates() const;              // Some trial has two or more runs.
};
Trials TrialsOf(const SweepData& data, const std::vector<SweptParameter>& params, const std::string& metric);

Figure OptimisationHistory(const SweepData& data, const std::string& metric);
Figure ParallelCoordinates(const SweepData& data, const std::string& metric);
std::vector<Figure> Slices(const SweepData& data, const std::string& metric);  // One per varying parameter.
Figure Importances(const SweepData& data, const std::string& metric);

// The four views for a sweep with swept parameters (none for a sweep without); when there are fewer than
// two trials or no parameter varies among them, a single empty figure whose caption says so.
std::vector<Figure> SearchViews(const SweepData& data, const std::string& metric);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_SEARCH_VIEWS_H_
