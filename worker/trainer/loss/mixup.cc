#include "worker/trainer/loss/mixup.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace nmsparse {

namespace {

using torch::indexing::Slice;

// Copies the box of `from` into `to` ([C, H, W] or [B, C, H, W]: the last two dimensions).
void PasteBox(torch::Tensor to, const torch::Tensor& from, const CutBox& b) {
  to.index({"...", Slice(b.yl, b.yh), Slice(b.xl, b.xh)})
      .copy_(from.index({"...", Slice(b.yl, b.yh), Slice(b.xl, b.xh)}));
}

// One draw of (lam, use_cutmix) per timm's branches, for batch mode.
std::pair<double, bool> DrawLam(const MixupOptions& o, MixupRandom& rng) {
  if (o.mixup_alpha > 0.0 && o.cutmix_alpha > 0.0) {
    const bool cut = rng.Uniform() < o.switch_prob;
    return {rng.Beta(cut ? o.cutmix_alpha : o.mixup_alpha), cut};
  }
  if (o.mixup_alpha > 0.0) return {rng.Beta(o.mixup_alpha), false};
  return {rng.Beta(o.cutmix_alpha), true};
}

// Mixes element i of `out` with element j of `orig` under params[k]; returns the lambda actually used.
double MixElement(torch::Tensor& out, const torch::Tensor& orig, int64_t i, int64_t j, double lam, bool cut,
                  bool pair, const MixupOptions& o, MixupRandom& rng) {
  if (lam == 1.0) return lam;
  if (cut) {
    auto [box, corrected] = CutmixBoxAndLam(out.size(-2), out.size(-1), lam, o, rng);
    PasteBox(out[i], orig[j], box);
    if (pair) PasteBox(out[j], orig[i], box);
    return static_cast<float>(corrected);  // Stored in timm's float32 array.
  }
  const float rest = 1.0f - static_cast<float>(lam);  // numpy float32 arithmetic.
  out[i].copy_(orig[i] * lam + orig[j] * static_cast<double>(rest));
  if (pair) out[j].copy_(orig[j] * lam + orig[i] * static_cast<double>(rest));
  return lam;
}

}  // namespace

MixupOptions MixupOptionsFrom(const OptimizerConfig& o, int64_t num_classes) {
  MixupOptions m;
  m.mixup_alpha = o.mixup_alpha;
  m.cutmix_alpha = o.cutmix_alpha;
  if (o.cutmix_max > 0.0) {
    m.cutmix_minmax = std::make_pair(o.cutmix_min, o.cutmix_max);
    m.cutmix_alpha = 1.0;  // timm forces it when minmax is set.
  }
  m.prob = o.mixup_prob;
  m.switch_prob = o.mixup_switch_prob;
  m.mode = o.mixup_mode;
  m.label_smoothing = o.label_smoothing;
  m.num_classes = num_classes;
  return m;
}

bool MixupEnabled(const OptimizerConfig& o, int epoch) {
  return o.mixup_off_epoch == 0 || epoch < o.mixup_off_epoch;
}

double MixupRandom::Uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }

double MixupRandom::Beta(double alpha) {
  std::gamma_distribution<double> gamma(alpha, 1.0);
  const double x = gamma(rng_), y = gamma(rng_);
  return x / (x + y);
}

int64_t MixupRandom::Int(int64_t low, int64_t high) {
  if (high <= low) return low;
  return std::uniform_int_distribution<int64_t>(low, high - 1)(rng_);
}

CutBox BoxAt(int64_t img_h, int64_t img_w, double lam, int64_t cy, int64_t cx) {
  const double ratio = std::sqrt(1.0 - lam);
  const auto cut_h = static_cast<int64_t>(static_cast<double>(img_h) * ratio);
  const auto cut_w = static_cast<int64_t>(static_cast<double>(img_w) * ratio);
  const auto clip = [](int64_t v, int64_t hi) { return std::clamp<int64_t>(v, 0, hi); };
  return {clip(cy - cut_h / 2, img_h), clip(cy + (cut_h + 1) / 2, img_h), clip(cx - cut_w / 2, img_w),
          clip(cx + (cut_w + 1) / 2, img_w)};
}

CutBox RandBox(int64_t img_h, int64_t img_w, double lam, MixupRandom& rng) {
  const int64_t cy = rng.Int(0, img_h);
  const int64_t cx = rng.Int(0, img_w);
  return BoxAt(img_h, img_w, lam, cy, cx);
}

CutBox RandBoxMinmax(int64_t img_h, int64_t img_w, std::pair<double, double> minmax, MixupRandom& rng) {
  const auto frac = [](int64_t size, double f) {
    return static_cast<int64_t>(static_cast<double>(size) * f);
  };
  const int64_t cut_h = rng.Int(frac(img_h, minmax.first), frac(img_h, minmax.second));
  const int64_t cut_w = rng.Int(frac(img_w, minmax.first), frac(img_w, minmax.second));
  const int64_t yl = rng.Int(0, img_h - cut_h + 1);
  const int64_t xl = rng.Int(0, img_w - cut_w + 1);
  return {yl, yl + cut_h, xl, xl + cut_w};
}

std::pair<CutBox, double> CutmixBoxAndLam(int64_t img_h, int64_t img_w, double lam, const MixupOptions& o,
                                          MixupRandom& rng) {
  const CutBox box =
      o.cutmix_minmax ? RandBoxMinmax(img_h, img_w, *o.cutmix_minmax, rng) : RandBox(img_h, img_w, lam, rng);
  if (o.correct_lam || o.cutmix_minmax) {
    const double area = static_cast<double>((box.yh - box.yl) * (box.xh - box.xl));
    lam = 1.0 - area / static_cast<double>(img_h * img_w);
  }
  return {box, lam};
}

MixParams ParamsPerBatch(const MixupOptions& o, MixupRandom& rng) {
  MixParams p{{1.0}, {false}};
  if (rng.Uniform() < o.prob) {
    auto [lam, cut] = DrawLam(o, rng);
    p.lam[0] = lam;
    p.use_cutmix[0] = cut;
  }
  return p;
}

MixParams ParamsPerElem(const MixupOptions& o, int64_t n, MixupRandom& rng) {
  MixParams p{std::vector<double>(n, 1.0), std::vector<bool>(n, false)};
  std::vector<double> lam_mix(n);
  if (o.mixup_alpha > 0.0 && o.cutmix_alpha > 0.0) {
    // numpy draws whole arrays: the switches, then both betas, as np.where(use_cutmix, cutmix, mixup).
    for (int64_t i = 0; i < n; ++i) p.use_cutmix[i] = rng.Uniform() < o.switch_prob;
    std::vector<double> cut(n);
    for (double& v : cut) v = rng.Beta(o.cutmix_alpha);
    for (int64_t i = 0; i < n; ++i) {
      const double mix = rng.Beta(o.mixup_alpha);
      lam_mix[i] = p.use_cutmix[i] ? cut[i] : mix;
    }
  } else {
    const bool cut = o.mixup_alpha <= 0.0;
    for (int64_t i = 0; i < n; ++i) {
      p.use_cutmix[i] = cut;
      lam_mix[i] = rng.Beta(cut ? o.cutmix_alpha : o.mixup_alpha);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (rng.Uniform() < o.prob) p.lam[i] = static_cast<float>(lam_mix[i]);
  }
  return p;
}

torch::Tensor MixupTarget(const torch::Tensor& labels, int64_t num_classes, const torch::Tensor& lam,
                          double smoothing) {
  const double off = smoothing / static_cast<double>(num_classes);
  const auto y1 = torch::full({labels.size(0), num_classes}, off, labels.options().dtype(torch::kFloat32))
                      .scatter_(1, labels.to(torch::kLong).view({-1, 1}), 1.0 - smoothing + off);
  return y1 * lam + y1.flip({0}) * (1.0 - lam);
}

torch::Tensor MixupTarget(const torch::Tensor& labels, int64_t num_classes, double lam, double smoothing) {
  const double off = smoothing / static_cast<double>(num_classes);
  const auto y1 = torch::full({labels.size(0), num_classes}, off, labels.options().dtype(torch::kFloat32))
                      .scatter_(1, labels.to(torch::kLong).view({-1, 1}), 1.0 - smoothing + off);
  return y1 * lam + y1.flip({0}) * (1.0 - lam);
}

torch::Tensor ApplyMixup(torch::Tensor& images, const torch::Tensor& labels, const MixupOptions& o,
                         bool enabled, MixupRandom& rng) {
  const int64_t b = images.size(0);
  if (o.mode == "batch") {
    const MixParams p = enabled ? ParamsPerBatch(o, rng) : MixParams{{1.0}, {false}};
    double lam = p.lam[0];
    if (lam != 1.0) {
      if (p.use_cutmix[0]) {
        auto [box, corrected] = CutmixBoxAndLam(images.size(-2), images.size(-1), lam, o, rng);
        lam = corrected;
        const auto flipped = images.flip({0});
        images = images.clone();
        PasteBox(images, flipped, box);
      } else {
        images = images * lam + images.flip({0}) * (1.0 - lam);
      }
    }
    return MixupTarget(labels, o.num_classes, lam, o.label_smoothing);
  }
  const bool pair = o.mode == "pair";
  const int64_t n = pair ? b / 2 : b;
  MixParams p = enabled ? ParamsPerElem(o, n, rng) : MixParams{std::vector<double>(n, 1.0), {}};
  p.use_cutmix.resize(n, false);
  const torch::Tensor orig = images;
  torch::Tensor out = images.clone();
  for (int64_t i = 0; i < n; ++i) {
    p.lam[i] = MixElement(out, orig, i, b - i - 1, p.lam[i], p.use_cutmix[i], pair, o, rng);
  }
  if (pair) p.lam.insert(p.lam.end(), p.lam.rbegin(), p.lam.rend());
  images = out;
  const auto lam = torch::tensor(p.lam, torch::kDouble).to(images.device(), torch::kFloat32).unsqueeze(1);
  return MixupTarget(labels, o.num_classes, lam, o.label_smoothing);
}

}  // namespace nmsparse
