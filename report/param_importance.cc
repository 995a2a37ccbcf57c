#include "report/param_importance.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace nmsparse::report {
namespace {

struct Node {
  int feature = -1;  // -1: a leaf.
  double threshold = 0;
  int left = -1, right = -1;
  double value = 0;  // A leaf's prediction: the mean objective of its samples.
};

using Box = std::vector<std::pair<double, double>>;  // Per feature, the node's [low, high].

// A CART regression tree grown on a bootstrap sample, splitting where the squared error drops most (as
// sklearn's DecisionTreeRegressor with the squared-error criterion; thresholds halfway between values).
class RegressionTree {
 public:
  RegressionTree(const ImportanceInput& in, const ForestSettings& s, std::vector<int> samples)
      : in_(in), settings_(s) {
    Grow(std::move(samples), 0);
  }
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  int Grow(std::vector<int> samples, int depth) {
    const int index = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
    double sum = 0, sum_sq = 0;
    for (int i : samples) {
      sum += in_.objective[i];
      sum_sq += in_.objective[i] * in_.objective[i];
    }
    const double n = static_cast<double>(samples.size());
    nodes_[index].value = sum / n;
    const double impurity = sum_sq / n - (sum / n) * (sum / n);
    if (depth >= settings_.max_depth || static_cast<int>(samples.size()) < settings_.min_samples_split ||
        impurity <= 1e-12 * (1 + std::abs(sum_sq / n))) {
      return index;
    }
    int feature = -1;
    double threshold = 0;
    if (!BestSplit(samples, &feature, &threshold)) return index;
    std::vector<int> left, right;
    for (int i : samples) (in_.rows[i][feature] <= threshold ? left : right).push_back(i);
    nodes_[index].feature = feature;
    nodes_[index].threshold = threshold;
    const int l = Grow(std::move(left), depth + 1);
    const int r = Grow(std::move(right), depth + 1);
    nodes_[index].left = l;
    nodes_[index].right = r;
    return index;
  }

  // Maximises sum_left^2 / n_left + sum_right^2 / n_right, which minimises the children's squared error.
  bool BestSplit(std::vector<int> samples, int* feature, double* threshold) const {
    const size_t n = samples.size();
    const size_t min_leaf = static_cast<size_t>(std::max(1, settings_.min_samples_leaf));
    double total = 0;
    for (int i : samples) total += in_.objective[i];
    double best = -1;
    for (size_t f = 0; f < in_.bounds.size(); ++f) {
      std::stable_sort(samples.begin(), samples.end(),
                       [&](int a, int b) { return in_.rows[a][f] < in_.rows[b][f]; });
      double left_sum = 0;
      for (size_t k = 0; k + 1 < n; ++k) {
        left_sum += in_.objective[samples[k]];
        const double x = in_.rows[samples[k]][f], next = in_.rows[samples[k + 1]][f];
        if (next <= x + 1e-7 * std::max(1.0, std::abs(x))) continue;  // No threshold between equal values.
        const size_t nl = k + 1, nr = n - nl;
        if (nl < min_leaf || nr < min_leaf) continue;
        const double right_sum = total - left_sum;
        const double score = left_sum * left_sum / nl + right_sum * right_sum / nr;
        if (score > best) {
          best = score;
          *feature = static_cast<int>(f);
          *threshold = x + (next - x) / 2;
        }
      }
    }
    return best >= 0;
  }

  const ImportanceInput& in_;
  const ForestSettings& settings_;
  std::vector<Node> nodes_;
};

double Width(const std::pair<double, double>& range) { return std::max(range.second - range.first, 0.0); }

struct Leaf {
  Box box;
  double value;
};

void CollectLeaves(const std::vector<Node>& nodes, int index, Box box, std::vector<Leaf>* leaves) {
  const Node& node = nodes[index];
  if (node.feature < 0) {
    leaves->push_back({std::move(box), node.value});
    return;
  }
  Box left = box;
  left[node.feature].second = std::min(left[node.feature].second, node.threshold);
  box[node.feature].first = std::max(box[node.feature].first, node.threshold);
  CollectLeaves(nodes, node.left, std::move(left), leaves);
  CollectLeaves(nodes, node.right, std::move(box), leaves);
}

// The weighted mean and variance of `values` under `weights`; false when the weights sum to 0.
bool WeightedVariance(const std::vector<double>& values, const std::vector<double>& weights,
                      double* variance) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (total <= 0) return false;
  double mean = 0;
  for (size_t i = 0; i < values.size(); ++i) mean += weights[i] * values[i] / total;
  *variance = 0;
  for (size_t i = 0; i < values.size(); ++i)
    *variance += weights[i] * (values[i] - mean) * (values[i] - mean);
  *variance /= total;
  return true;
}

// Each feature's marginal variance over the tree's total variance; empty when the tree is constant.
std::vector<double> TreeShares(const std::vector<Node>& nodes, const Box& bounds) {
  std::vector<Leaf> leaves;
  CollectLeaves(nodes, 0, bounds, &leaves);
  // A leaf's weight in the marginal of feature f: its volume over the other features.
  auto volume_without = [&](const Leaf& leaf, size_t f) {
    double v = 1;
    for (size_t g = 0; g < bounds.size(); ++g) {
      if (g != f && Width(bounds[g]) > 0) v *= Width(leaf.box[g]);
    }
    return v;
  };
  std::vector<double> values, weights;
  for (const Leaf& leaf : leaves) {
    values.push_back(leaf.value);
    weights.push_back(volume_without(leaf, bounds.size()));
  }
  double total_variance = 0;
  if (!WeightedVariance(values, weights, &total_variance) || total_variance <= 0) return {};
  std::vector<double> shares(bounds.size(), 0.0);
  for (size_t f = 0; f < bounds.size(); ++f) {
    if (Width(bounds[f]) <= 0) continue;
    std::vector<double> cuts = {bounds[f].first, bounds[f].second};
    for (const Node& node : nodes) {
      if (node.feature == static_cast<int>(f)) cuts.push_back(node.threshold);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    // The marginal prediction is constant between consecutive cuts: evaluate it at each interval's middle.
    std::vector<double> marginals, sizes;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      const double mid = (cuts[k] + cuts[k + 1]) / 2;
      double sum = 0, weight = 0;
      for (const Leaf& leaf : leaves) {
        if (mid > leaf.box[f].first && mid <= leaf.box[f].second) {
          const double w = volume_without(leaf, f);
          sum += w * leaf.value;
          weight += w;
        }
      }
      if (weight <= 0) continue;
      marginals.push_back(sum / weight);
      sizes.push_back(cuts[k + 1] - cuts[k]);
    }
    double variance = 0;
    if (WeightedVariance(marginals, sizes, &variance)) shares[f] = std::max(variance, 0.0) / total_variance;
  }
  return shares;
}

}  // namespace

std::vector<size_t> ThinnedTrials(size_t n, size_t k, uint64_t seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 random(seed);
  for (size_t i = 0; i < k && i < n; ++i) {  // A partial Fisher-Yates shuffle: the first k are the sample.
    std::swap(order[i], order[i + random() % (n - i)]);
  }
  order.resize(std::min(k, n));
  std::sort(order.begin(), order.end());  // Back in trial order.
  return order;
}

std::vector<double> FanovaImportances(const ImportanceInput& input, const ForestSettings& settings) {
  if (settings.max_trials >= 2 && input.rows.size() > settings.max_trials) {
    ImportanceInput thinned;
    thinned.bounds = input.bounds;
    for (size_t i : ThinnedTrials(input.rows.size(), settings.max_trials, settings.seed)) {
      thinned.rows.push_back(input.rows[i]);
      thinned.objective.push_back(input.objective[i]);
    }
    return FanovaImportances(thinned, settings);
  }
  const size_t params = input.bounds.size();
  std::vector<double> importances(params, 0.0);
  const size_t n = input.rows.size();
  if (n < 2 || params == 0) return importances;
  Box bounds = input.bounds;
  for (const std::vector<double>& row : input.rows) {
    for (size_t f = 0; f < params; ++f) {
      bounds[f].first = std::min(bounds[f].first, row[f]);
      bounds[f].second = std::max(bounds[f].second, row[f]);
    }
  }
  std::mt19937_64 random(settings.seed);
  int counted = 0;
  for (int t = 0; t < settings.trees; ++t) {
    std::vector<int> sample(n);
    for (int& i : sample) i = static_cast<int>(random() % n);  // Bootstrap: n draws with replacement.
    const std::vector<double> shares = TreeShares(RegressionTree(input, settings, sample).nodes(), bounds);
    if (shares.empty()) continue;  // A constant tree explains nothing (Optuna skips it too).
    for (size_t f = 0; f < params; ++f) importances[f] += shares[f];
    ++counted;
  }
  const double sum = std::accumulate(importances.begin(), importances.end(), 0.0);
  if (counted == 0 || sum <= 0) return std::vector<double>(params, 0.0);
  for (double& v : importances) v /= sum;  // Averaging over the trees cancels in the normalisation.
  return importances;
}

}  // namespace nmsparse::report
