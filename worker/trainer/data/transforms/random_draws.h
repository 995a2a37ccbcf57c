// The draws timm's transforms make with Python's `random` (uniform, randint, a coin, round), taken from an
// image's ImageRng: the same distributions, not Python's streams.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RANDOM_DRAWS_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RANDOM_DRAWS_H_

#include <cmath>
#include <random>

#include "worker/trainer/data/image_transform.h"

namespace nmsparse {

// random.uniform(a, b): a + (b - a) * U, U in [0, 1).
inline double UniformDraw(ImageRng& rng, double a, double b) {
  return a + (b - a) * std::generate_canonical<double, 53>(rng);
}

// random.randint(lo, hi): lo..hi inclusive.
inline int IntDraw(ImageRng& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// torch.rand(1) < p, the coin of torchvision's random flips.
inline bool CoinDraw(ImageRng& rng, double p) { return std::generate_canonical<double, 53>(rng) < p; }

// Python's int(round(x)): halves to even (the default rounding mode).
inline int PythonRound(double x) { return static_cast<int>(std::nearbyint(x)); }

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RANDOM_DRAWS_H_
