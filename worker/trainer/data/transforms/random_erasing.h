// timm's RandomErasing on a normalised float CHW image (after Normalize): with probability `probability`,
// erases 1..max_count boxes (count uniform), each of area uniform in [min_area, max_area] of the image over
// the count and log-uniform aspect in [min_aspect, 1 / min_aspect], up to 10 attempts per box; the box is
// filled with zeros (const), one normal value per channel (rand) or normal values per pixel (pixel).
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RANDOM_ERASING_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RANDOM_ERASING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/trainer/data/image_transform.h"

namespace nmsparse {

enum class EraseMode { kConst, kRand, kPixel };

// "const", "rand" or "pixel" (timm's remode); InvalidArgument names the value.
absl::StatusOr<EraseMode> ParseEraseMode(const std::string& name);
std::string EraseModeName(EraseMode mode);

struct RandomErasingParams {
  double probability = 0.0;  // timm's reprob; 0: off.
  EraseMode mode = EraseMode::kConst;
  int max_count = 1;  // timm's recount.
  double min_area = 0.02, max_area = 1.0 / 3.0;
  double min_aspect = 0.3;  // Aspects log-uniform in [min_aspect, 1 / min_aspect].
};

// One erased box, for the tests' statistics.
struct ErasedBox {
  int top = 0, left = 0, height = 0, width = 0;
};

// Erases boxes of the channels x height x width image `chw`, drawing from `rng`; returns the boxes.
std::vector<ErasedBox> RandomErase(const RandomErasingParams& p, float* chw, int channels, int height,
                                   int width, ImageRng& rng);

std::string DescribeRandomErasing(const RandomErasingParams& p);

// The random stream of an image's erasing, apart from its transform's (ImageTransform::Apply seeds that one
// with `image_seed`): erasing runs later, on the normalised tensor.
ImageRng ErasingRng(uint64_t image_seed);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RANDOM_ERASING_H_
