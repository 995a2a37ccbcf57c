// Which swept parameters explain a sweep's objective: fANOVA over a random forest, the method of Optuna's
// default importance evaluator (optuna/importance/_fanova; Hutter, Hoos and Leyton-Brown, "An Efficient
// Approach for Assessing Hyperparameter Importance", ICML 2014). A forest of CART regression trees learns
// params -> objective; for each tree, a parameter's importance is the variance of the tree's prediction
// marginalised over all other parameters (averaged uniformly over their bounds), as a share of the tree's
// total variance; the shares are averaged over the trees and normalised to sum 1. Deterministic: the forest's
// bootstrap draws come from a fixed-seed std::mt19937_64. docs/sweeps.md, "Search views", says what it can
// and cannot tell.
#ifndef NMSPARSE_REPORT_PARAM_IMPORTANCE_H_
#define NMSPARSE_REPORT_PARAM_IMPORTANCE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nmsparse::report {

struct ImportanceInput {
  // One row per trial: each parameter's value on the scale its marginal averages over (log10 of a
  // log-uniform parameter, a categorical parameter's index). No NaN.
  std::vector<std::vector<double>> rows;
  std::vector<double> objective;  // One per row.
  // Per parameter, the [low, high] range its marginal averages over (the search space); widened to the
  // rows' values when they lie outside.
  std::vector<std::pair<double, double>> bounds;
};

// Optuna's FanovaImportanceEvaluator defaults (sklearn's RandomForestRegressor otherwise at its defaults:
// bootstrap samples, every feature considered at each split).
struct ForestSettings {
  int trees = 64;
  int max_depth = 64;
  int min_samples_split = 2;
  int min_samples_leaf = 1;
  uint64_t seed = 0;
  // More trials than this are thinned to this many, drawn at random without replacement (from `seed`; an
  // evenly spaced sample would alias with a grid's nested order): the forest's cost grows faster than n
  // (12.7 s for 50,000 trials, 0.05 s for 1,000), and a few thousand trials already pin down which
  // parameters matter. Optuna uses every trial.
  size_t max_trials = 2000;
};

// The trials a forest with max_trials = k learns from when there are n: k of them drawn without replacement
// from `seed`, in trial order.
std::vector<size_t> ThinnedTrials(size_t n, size_t k, uint64_t seed);

// One importance per parameter, in the input's order, summing to 1; all 0 when the objective does not vary
// or there are fewer than two rows.
std::vector<double> FanovaImportances(const ImportanceInput& input, const ForestSettings& settings = {});

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_PARAM_IMPORTANCE_H_
