#include "server/search/tpe_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "schemas/limits.h"

namespace nmsparse::server {
namespace {

constexpr double kMinBandwidth = 0.05;

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

double Uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// A Parzen density on [0, 1]: the uniform prior and one truncated Gaussian per point, equally weighted.
class RangeDensity {
 public:
  explicit RangeDensity(std::vector<double> points) : points_(std::move(points)) {
    const double n = static_cast<double>(points_.size());
    double sd = 0.5;  // One point: spread it over half the range.
    if (points_.size() > 1) {
      const double mean = std::accumulate(points_.begin(), points_.end(), 0.0) / n;
      double ss = 0;
      for (double p : points_) ss += (p - mean) * (p - mean);
      sd = std::sqrt(ss / (n - 1));
    }
    bandwidth_ = std::clamp(1.06 * sd * std::pow(std::max(n, 1.0), -0.2), kMinBandwidth, 1.0);
  }

  double Pdf(double u) const {
    double sum = 1.0;  // The uniform prior's density on [0, 1].
    for (double p : points_) {
      const double z = (u - p) / bandwidth_;
      const double mass = NormalCdf((1 - p) / bandwidth_) - NormalCdf(-p / bandwidth_);
      sum += std::exp(-0.5 * z * z) / (bandwidth_ * std::sqrt(2 * M_PI) * mass);
    }
    return sum / static_cast<double>(points_.size() + 1);
  }

  double Sample(std::mt19937_64& rng) const {
    const size_t k = static_cast<size_t>(Uniform01(rng) * static_cast<double>(points_.size() + 1));
    if (k >= points_.size()) return Uniform01(rng);  // The prior.
    std::normal_distribution<double> normal(points_[k], bandwidth_);
    for (int attempt = 0; attempt < 64; ++attempt) {
      const double u = normal(rng);
      if (u >= 0 && u <= 1) return u;
    }
    return std::clamp(points_[k], 0.0, 1.0);
  }

 private:
  std::vector<double> points_;
  double bandwidth_ = 0.5;
};

// A smoothed categorical density: (count + 1) / (points + K).
class ChoiceDensity {
 public:
  ChoiceDensity(const std::vector<double>& points, int k) : weights_(k, 1.0), total_(points.size() + k) {
    for (double p : points) weights_[static_cast<size_t>(p)] += 1.0;
  }
  double Pdf(double c) const { return weights_[static_cast<size_t>(c)] / total_; }
  double Sample(std::mt19937_64& rng) const {
    double r = Uniform01(rng) * total_;
    for (size_t i = 0; i < weights_.size(); ++i) {
      if (r < weights_[i]) return static_cast<double>(i);
      r -= weights_[i];
    }
    return static_cast<double>(weights_.size() - 1);
  }

 private:
  std::vector<double> weights_;
  double total_;
};

// l or g for one axis.
struct AxisDensity {
  bool choice = false;
  RangeDensity range{{}};
  ChoiceDensity choices{{}, 1};
  double Pdf(double x) const { return choice ? choices.Pdf(x) : range.Pdf(x); }
  double Sample(std::mt19937_64& rng) const { return choice ? choices.Sample(rng) : range.Sample(rng); }
};

AxisDensity Fit(const v1::RandomAxis& axis, const std::vector<double>& points) {
  AxisDensity d;
  d.choice = IsChoice(axis);
  if (d.choice) {
    d.choices = ChoiceDensity(points, axis.choices_size());
  } else {
    d.range = RangeDensity(points);
  }
  return d;
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
  // Unit coordinates of the results, ranked best first (stable: earlier runs first on ties).
  std::vector<std::pair<double, std::vector<double>>> ranked;
  for (const TpeResult& r : results) {
    if (r.values.size() != axes_.size()) return absl::InvalidArgumentError("a result lacks an axis value");
    std::vector<double> x;
    for (size_t a = 0; a < axes_.size(); ++a) {
      absl::StatusOr<double> u = ToUnit(axes_[a], r.values[a]);
      if (!u.ok()) return u.status();
      x.push_back(*u);
    }
    ranked.emplace_back(search_.mode() == "min" ? r.metric : -r.metric, std::move(x));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const uint32_t startup = std::max<uint32_t>(1, search_.n_startup());
  std::vector<double> best;
  if (ranked.size() < startup) {
    best = UniformDraw(axes_, rng);
  } else {
    const double gamma = search_.gamma() > 0 ? search_.gamma() : 0.25;
    const size_t n_good = std::max<size_t>(1, static_cast<size_t>(std::ceil(gamma * ranked.size())));
    std::vector<AxisDensity> good, bad;
    for (size_t a = 0; a < axes_.size(); ++a) {
      std::vector<double> g, b;
      for (size_t i = 0; i < ranked.size(); ++i) (i < n_good ? g : b).push_back(ranked[i].second[a]);
      good.push_back(Fit(axes_[a], g));
      bad.push_back(Fit(axes_[a], b));
    }
    double best_score = -INFINITY;
    const int64_t candidates = std::clamp<int64_t>(search_.n_candidates(), 1, limits::kMaxSearchCandidates);
    for (int64_t c = 0; c < candidates; ++c) {
      std::vector<double> x;
      double score = 0;
      for (size_t a = 0; a < axes_.size(); ++a) {
        x.push_back(good[a].Sample(rng));
        score += std::log(good[a].Pdf(x.back())) - std::log(bad[a].Pdf(x.back()));
      }
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
