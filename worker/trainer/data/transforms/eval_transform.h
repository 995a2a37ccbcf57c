// timm's evaluation transform (create_transform with is_training=False, crop_mode "center"): resize the
// shorter side to floor(img_size / crop_pct) with the model's interpolation (torchvision's Resize), then take
// the centre img_size crop (torchvision's CenterCrop, padding with black when the image is smaller).
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_EVAL_TRANSFORM_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_EVAL_TRANSFORM_H_

#include <string>

#include "worker/trainer/data/image_transform.h"
#include "worker/trainer/data/transforms/resample.h"

namespace nmsparse {

struct EvalTransformParams {
  int img_size = 224;       // The square output.
  double crop_pct = 0.875;  // timm's DEFAULT_CROP_PCT.
  Interpolation interpolation = Interpolation::kBilinear;
};

// torchvision's Resize(size) of a width x height image: the shorter side becomes `size`, the longer
// int(size * long / short).
void ShorterSideSize(int width, int height, int size, int* out_width, int* out_height);

// torchvision's CenterCrop of `image` to size x size.
Image CenterCrop(const Image& image, int size);

class EvalTransform : public ImageTransform {
 public:
  explicit EvalTransform(const EvalTransformParams& params) : params_(params) {}
  absl::StatusOr<Image> Apply(const ImageSource& source, uint64_t image_seed) const override;
  int output_width() const override { return params_.img_size; }
  int output_height() const override { return params_.img_size; }
  std::string Describe() const override;
  // floor(img_size / crop_pct).
  int resize_size() const;

 private:
  EvalTransformParams params_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_EVAL_TRANSFORM_H_
