#include "worker/trainer/data/randaugment/rand_augment.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nmsparse {
namespace {

// Uniform in [0, 1) from the top 53 bits: the same stream on every standard library.
double Uniform(ImageRng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// A standard normal by Box-Muller (one per call, nothing cached between images).
double Gauss(ImageRng& rng) {
  const double u1 = 1.0 - Uniform(rng);  // (0, 1]: log stays finite.
  const double u2 = Uniform(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

std::string Number(double v) { return absl::StrCat(v); }

}  // namespace

pil::Fill RandAugmentFill(const std::array<double, 3>& mean) {
  pil::Fill fill;
  for (int c = 0; c < 3; ++c) {
    // std::nearbyint rounds half to even under the default rounding mode, as Python's round().
    fill[c] = static_cast<uint8_t>(std::clamp(std::nearbyint(255 * mean[c]), 0.0, 255.0));
  }
  return fill;
}

RandAugment::RandAugment(const RandAugmentConfig& config, const pil::Fill& fill,
                         std::optional<pil::Resample> interpolation)
    : config_(config), fill_(fill), interpolation_(interpolation), ops_(RandAugmentOps(config)) {}

RandAugmentOp RandAugment::Choose(ImageRng& rng, std::vector<bool>& taken) const {
  if (config_.op_set != RandAugmentOpSet::kWeighted) {
    // numpy's choice(replace=True) without weights: each op equally likely, repeats allowed.
    const size_t i = std::min(ops_.size() - 1, static_cast<size_t>(Uniform(rng) * ops_.size()));
    return ops_[i].op;
  }
  // numpy's choice(replace=False, p=weights): in distribution, successive draws by weight among the ops not
  // yet taken.
  double total = 0;
  for (size_t i = 0; i < ops_.size(); ++i) total += taken[i] ? 0 : ops_[i].weight;
  double u = Uniform(rng) * total;
  size_t pick = ops_.size();
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (taken[i]) continue;
    pick = i;
    if (u < ops_[i].weight) break;
    u -= ops_[i].weight;
  }
  taken[pick] = true;
  return ops_[pick].op;
}

std::vector<RandAugmentDraw> RandAugment::Draw(ImageRng& rng) const {
  std::vector<RandAugmentDraw> draws;
  std::vector<bool> taken(ops_.size(), false);
  for (int layer = 0; layer < config_.num_layers; ++layer) draws.push_back({Choose(rng, taken)});
  // AugmentOp.__call__ per op, in timm's order of draws: probability, magnitude noise, sign, resample.
  for (RandAugmentDraw& draw : draws) {
    if (config_.prob < 1.0 && Uniform(rng) > config_.prob) continue;
    draw.applied = true;
    double magnitude = config_.magnitude;
    if (config_.uniform_magnitude()) {
      magnitude = Uniform(rng) * magnitude;
    } else if (config_.magnitude_std > 0) {
      magnitude += config_.magnitude_std * Gauss(rng);
    }
    draw.magnitude = std::max(0.0, std::min(magnitude, config_.UpperBound()));
    const bool negate = IsSignedRandAugmentOp(draw.op) && Uniform(rng) > 0.5;
    draw.arg = RandAugmentArg(draw.op, draw.magnitude, negate);
    if (IsGeometricRandAugmentOp(draw.op)) {
      draw.resample =
          interpolation_.value_or(Uniform(rng) < 0.5 ? pil::Resample::kBilinear : pil::Resample::kBicubic);
    }
  }
  return draws;
}

void RandAugment::Apply(Image& image, ImageRng& rng) const {
  for (const RandAugmentDraw& draw : Draw(rng)) {
    if (draw.applied) ApplyRandAugmentOp(draw.op, draw.arg, draw.resample, fill_, image);
  }
}

std::string RandAugment::Describe() const {
  std::vector<absl::string_view> names;
  for (const WeightedRandAugmentOp& op : ops_) names.push_back(RandAugmentOpName(op.op));
  const std::string mstd =
      config_.uniform_magnitude() ? "inf (uniform in [0, m])" : Number(config_.magnitude_std);
  std::string weights;
  if (config_.op_set == RandAugmentOpSet::kWeighted) weights = " weighted, without replacement";
  return absl::StrCat("RandAugment n=", config_.num_layers, " m=", config_.magnitude, " mstd=", mstd,
                      " mmax=", Number(config_.UpperBound()), " p=", Number(config_.prob), " fill=(",
                      fill_[0], ",", fill_[1], ",", fill_[2], ") interpolation=",
                      interpolation_ ? pil::ResampleName(*interpolation_) : "random (bilinear or bicubic)",
                      weights, " ops=", absl::StrJoin(names, ","));
}

}  // namespace nmsparse
