// Mixup and CutMix as timm's Mixup (timm/data/mixup.py): parameters per batch, per pair or per element,
// CutMix boxes from lambda (rand_bbox) or from min/max fractions (rand_bbox_minmax) with lambda corrected to
// the box's area, and label smoothing folded into the mixed targets (mixup_target). Random numbers come from
// a host generator seeded per micro-batch (resume-exact); nothing is read back from the device.
#ifndef NMSPARSE_WORKER_TRAINER_LOSS_MIXUP_H_
#define NMSPARSE_WORKER_TRAINER_LOSS_MIXUP_H_

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "schemas/experiment_config.h"

namespace nmsparse {

struct MixupOptions {
  double mixup_alpha = 1.0;
  double cutmix_alpha = 0.0;
  std::optional<std::pair<double, double>> cutmix_minmax;  // Set: boxes from it, cutmix_alpha forced to 1.
  double prob = 1.0;
  double switch_prob = 0.5;
  std::string mode = "batch";  // batch, pair or elem.
  bool correct_lam = true;
  double label_smoothing = 0.1;
  int64_t num_classes = 1000;
};

// The options of a run's recipe (timm's train.py mixup_args).
MixupOptions MixupOptionsFrom(const OptimizerConfig& optimizer, int64_t num_classes);

// timm's mixup_enabled in train.py: off from epoch mixup_off_epoch (0: never).
bool MixupEnabled(const OptimizerConfig& optimizer, int epoch);

// The host draws timm makes with numpy (virtual: tests replay timm's recorded draws).
class MixupRandom {
 public:
  explicit MixupRandom(uint64_t seed) : rng_(seed) {}
  virtual ~MixupRandom() = default;
  virtual double Uniform();           // [0, 1), as np.random.rand.
  virtual double Beta(double alpha);  // Beta(alpha, alpha), as np.random.beta.
  virtual int64_t Int(int64_t low,
                      int64_t high);  // [low, high), as np.random.randint (low when high <= low).

 private:
  std::mt19937_64 rng_;
};

struct CutBox {
  int64_t yl = 0, yh = 0, xl = 0, xh = 0;
  bool operator==(const CutBox& o) const { return yl == o.yl && yh == o.yh && xl == o.xl && xh == o.xh; }
};

// rand_bbox for a given centre (cy, cx): a square-ratio box of side sqrt(1 - lam) of the image's, clipped.
CutBox BoxAt(int64_t img_h, int64_t img_w, double lam, int64_t cy, int64_t cx);
CutBox RandBox(int64_t img_h, int64_t img_w, double lam, MixupRandom& rng);
// rand_bbox_minmax for given draws: sides cut_h, cut_w and corner (yl, xl).
CutBox RandBoxMinmax(int64_t img_h, int64_t img_w, std::pair<double, double> minmax, MixupRandom& rng);
// cutmix_bbox_and_lam: the box and lambda corrected to 1 - box area / image area (with correct_lam or
// minmax).
std::pair<CutBox, double> CutmixBoxAndLam(int64_t img_h, int64_t img_w, double lam,
                                          const MixupOptions& options, MixupRandom& rng);

// The mixing parameters of a batch (_params_per_batch) or of n elements (_params_per_elem; lambdas float32
// as timm's numpy arrays).
struct MixParams {
  std::vector<double> lam;
  std::vector<bool> use_cutmix;
};
MixParams ParamsPerBatch(const MixupOptions& options, MixupRandom& rng);
MixParams ParamsPerElem(const MixupOptions& options, int64_t n, MixupRandom& rng);

// mixup_target: smoothed one-hot targets y mixed as y * lam + y.flip(0) * (1 - lam). `lam` is a scalar or a
// [B, 1] tensor (per element).
torch::Tensor MixupTarget(const torch::Tensor& labels, int64_t num_classes, const torch::Tensor& lam,
                          double smoothing);
torch::Tensor MixupTarget(const torch::Tensor& labels, int64_t num_classes, double lam, double smoothing);

// timm's Mixup.__call__: mixes `images` [B, C, H, W] (B even) in place and returns the mixed targets.
// enabled = false is timm's mixup_enabled = false (after mixup_off_epoch): targets smoothed, nothing mixed.
torch::Tensor ApplyMixup(torch::Tensor& images, const torch::Tensor& labels, const MixupOptions& options,
                         bool enabled, MixupRandom& rng);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_LOSS_MIXUP_H_
