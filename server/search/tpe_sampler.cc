#include "server/search/tpe_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "contract/metric_direction.h"
#include "schemas/limits.h"
#include "server/search/parzen_estimator.h"

namespace nmsparse::server {
namespace {

// The good results are at most this many, however many results there are (Optuna's default gamma rule).
constexpr size_t kMaxGood = 25;

bool IsChoice(const v1::RandomAxis& axis) { return axis.choices_size() > 0; }

// A range axis' bounds in its own scale (log for a log axis; +-0.5 around integers).
std::pair<double, double> Span(const v1::RandomAxis& axis) {
  double lo = axis.min(), hi = axis.max();
  if (axis.integer()) {
    lo = std::ceil(lo) - 0.5;
    hi = std::floor(hi) + 0.5;
  }
  if (axis.log()) return {std::log(std::max(lo, axis.min())), std::log(hi)};
  return {lo, hi};
}

// The unit coordinate of a value text: u in [0, 1] on a range, the choice index on choices.
absl::StatusOr<double> ToUnit(const v1::RandomAxis& axis, const std::string& text) {
  if (IsChoice(axis)) {
    for (int i = 0; i < axis.choices_size(); ++i) {
      if (axis.choices(i) == text) return static_cast<double>(i);
    }
    return absl::InvalidArgumentError(
        absl::StrCat(axis.key(), ": value '", text, "' is not one of its choices"));
  }
  double v = 0;
  if (!absl::SimpleAtod(text, &v) || (axis.log() && v <= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(axis.key(), ": value '", text, "' is not a number of its range"));
  }
  const auto [lo, hi] = Span(axis);
  const double x = axis.log() ? std::log(v) : v;
  return hi > lo ? std::clamp((x - lo) / (hi - lo), 0.0, 1.0) : 0.5;
}

// The value text of a unit coordinate.
std::string FromUnit(const v1::RandomAxis& axis, double u) {
  if (IsChoice(axis)) return axis.choices(static_cast<int>(u));
  const auto [lo, hi] = Span(axis);
  double x = lo + u * (hi - lo);
  if (axis.log()) x = std::exp(x);
  if (axis.integer()) {
    const double v = std::clamp(std::round(x), std::ceil(axis.min()), std::floor(axis.max()));
    return absl::StrCat(static_cast<int64_t>(v));
  }
  return absl::StrFormat("%.6g", std::clamp(x, axis.min(), axis.max()));
}

std::vector<double> UniformDraw(const std::vector<v1::RandomAxis>& axes, std::mt19937_64& rng) {
  std::vector<double> x;
  for (const v1::RandomAxis& axis : axes) {
    const double u = Uniform01(rng);
    x.push_back(
        IsChoice(axis) ? std::min<double>(axis.choices_size() - 1, std::floor(u * axis.choices_size())) : u);
  }
  return x;
}

}  // namespace

size_t GoodCount(double gamma, size_t n) {
  return std::clamp<size_t>(static_cast<size_t>(std::ceil(gamma * static_cast<double>(n))), 1, kMaxGood);
}

TpeSampler::TpeSampler(std::vector<v1::RandomAxis> axes, v1::Search search)
    : axes_(std::move(axes)), search_(std::move(search)) {}

absl::StatusOr<std::vector<std::string>> TpeSampler::Propose(uint64_t index,
                                                             const std::vector<TpeResult>& results,
                                                             uint32_t attempt) const {
  std::vector<uint32_t> seed = {static_cast<uint32_t>(search_.seed()),
                                static_cast<uint32_t>(search_.seed() >> 32), static_cast<uint32_t>(index),
                                static_cast<uint32_t>(index >> 32)};
  if (attempt > 0) seed.push_back(attempt);  // The first attempt draws as before retries existed.
  std::seed_seq seq(seed.begin(), seed.end());
  std::mt19937_64 rng(seq);
  // Unit coordinates of the results in run order, and their ranks best first (ties: earlier runs first).
  std::vector<std::vector<double>> points;
  std::vector<std::pair<double, size_t>> ranked;
  for (const TpeResult& r : results) {
    if (r.values.size() != axes_.size()) return absl::InvalidArgumentError("a result lacks an axis value");
    std::vector<double> x;
    for (size_t a = 0; a < axes_.size(); ++a) {
      NM_ASSIGN_OR_RETURN(double u, ToUnit(axes_[a], r.values[a]));
      x.push_back(u);
    }
    ranked.emplace_back(r.metric, points.size());
    points.push_back(std::move(x));
  }
  // Best first; a non-finite result (a diverged run) is among the worst (contract::RanksBefore).
  const bool maximize = search_.mode() != "min";
  std::stable_sort(ranked.begin(), ranked.end(), [maximize](const auto& a, const auto& b) {
    return contract::RanksBefore(a.first, b.first, maximize);
  });
  const uint32_t startup = std::max<uint32_t>(1, search_.n_startup());
  std::vector<double> best;
  if (ranked.size() < startup) {
    best = UniformDraw(axes_, rng);
  } else {
    const double gamma = search_.gamma() > 0 ? search_.gamma() : 0.25;
    const size_t n_good = GoodCount(gamma, ranked.size());
    std::vector<bool> is_good(points.size(), false);
    for (size_t i = 0; i < n_good; ++i) is_good[ranked[i].second] = true;
    // Each side keeps run order, so that its older points weigh less (ParzenWeights).
    std::vector<std::vector<double>> good_points, bad_points;
    for (size_t i = 0; i < points.size(); ++i) (is_good[i] ? good_points : bad_points).push_back(points[i]);
    std::vector<int> choices;
    for (const v1::RandomAxis& axis : axes_) choices.push_back(axis.choices_size());
    const ParzenEstimator good(choices, good_points), bad(choices, bad_points);
    double best_score = -INFINITY;
    const int64_t candidates = std::clamp<int64_t>(search_.n_candidates(), 1, limits::kMaxSearchCandidates);
    for (int64_t c = 0; c < candidates; ++c) {
      std::vector<double> x = good.Sample(rng);
      const double score = good.LogPdf(x) - bad.LogPdf(x);
      if (score > best_score) {
        best_score = score;
        best = std::move(x);
      }
    }
  }
  std::vector<std::string> out;
  for (size_t a = 0; a < axes_.size(); ++a) out.push_back(FromUnit(axes_[a], best[a]));
  return out;
}

std::vector<std::string> ExtremeValues(const v1::RandomAxis& axis) {
  if (IsChoice(axis)) return {axis.choices().begin(), axis.choices().end()};
  std::vector<std::string> out = {FromUnit(axis, 0.0)};
  if (const std::string max = FromUnit(axis, 1.0); max != out.front()) out.push_back(max);
  return out;
}

std::string MiddleValue(const v1::RandomAxis& axis) {
  return IsChoice(axis) ? axis.choices(0) : FromUnit(axis, 0.5);
}

}  // namespace nmsparse::server
