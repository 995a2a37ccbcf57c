#include "worker/trainer/data/transforms/random_erasing.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "worker/trainer/data/transforms/random_draws.h"

namespace nmsparse {

absl::StatusOr<EraseMode> ParseEraseMode(const std::string& name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "const") return EraseMode::kConst;
  if (lower == "rand") return EraseMode::kRand;
  if (lower == "pixel") return EraseMode::kPixel;
  return absl::InvalidArgumentError("random erasing mode \"" + name +
                                    "\" is unknown: use const, rand or pixel");
}

std::string EraseModeName(EraseMode mode) {
  switch (mode) {
    case EraseMode::kConst:
      return "const";
    case EraseMode::kRand:
      return "rand";
    case EraseMode::kPixel:
      return "pixel";
  }
  return "";
}

std::vector<ErasedBox> RandomErase(const RandomErasingParams& p, float* chw, int channels, int height,
                                   int width, ImageRng& rng) {
  std::vector<ErasedBox> boxes;
  if (p.probability <= 0.0 || UniformDraw(rng, 0.0, 1.0) > p.probability) return boxes;
  const double area = static_cast<double>(height) * width;
  const int count = p.max_count <= 1 ? 1 : IntDraw(rng, 1, p.max_count);
  const double log_min = std::log(p.min_aspect), log_max = std::log(1.0 / p.min_aspect);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t plane = static_cast<int64_t>(height) * width;
  for (int n = 0; n < count; ++n) {
    for (int attempt = 0; attempt < 10; ++attempt) {
      const double target_area = UniformDraw(rng, p.min_area, p.max_area) * area / count;
      const double aspect = std::exp(UniformDraw(rng, log_min, log_max));
      const int h = PythonRound(std::sqrt(target_area * aspect));
      const int w = PythonRound(std::sqrt(target_area / aspect));
      if (w >= width || h >= height) continue;
      const ErasedBox box{IntDraw(rng, 0, height - h), IntDraw(rng, 0, width - w), h, w};
      for (int c = 0; c < channels; ++c) {
        const float colour = p.mode == EraseMode::kRand ? normal(rng) : 0.0f;
        for (int y = box.top; y < box.top + h; ++y) {
          float* row = chw + c * plane + static_cast<int64_t>(y) * width + box.left;
          for (int x = 0; x < w; ++x) row[x] = p.mode == EraseMode::kPixel ? normal(rng) : colour;
        }
      }
      boxes.push_back(box);
      break;
    }
  }
  return boxes;
}

ImageRng ErasingRng(uint64_t image_seed) {
  std::seed_seq seq{static_cast<uint32_t>(image_seed), static_cast<uint32_t>(image_seed >> 32), 0x45524153u};
  return ImageRng(seq);
}

std::string DescribeRandomErasing(const RandomErasingParams& p) {
  return absl::StrFormat(
      "RandomErasing(p=%g, mode=%s, count=1..%d, area=(%g, %.4g), aspect=(%g, %.4g), on the normalised "
      "image)",
      p.probability, EraseModeName(p.mode), p.max_count, p.min_area, p.max_area, p.min_aspect,
      1.0 / p.min_aspect);
}

}  // namespace nmsparse
