// The image transforms a spec's run will use (timm's create_transform, training and evaluation), with the
// model's timm defaults filled in where the data keys leave them unset: what the trainer builds its
// transforms from (worker/trainer/data/transforms/), and their description in words for `nmctl validate`
// and `nmtrain --validate-only`. Plain C++ (no LibTorch).
#ifndef NMSPARSE_SCHEMAS_DATA_PIPELINE_H_
#define NMSPARSE_SCHEMAS_DATA_PIPELINE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/experiment_config.h"
#include "schemas/rand_augment_config.h"

namespace nmsparse {

struct DataPipeline {
  // Stored images of any size (imagefolder, packed, cifar10/100) go through timm's transforms below;
  // fixed-size datasets (fashion_mnist, synthetic, shards) through pad-and-crop, flips and normalisation
  // only.
  bool stored_images = true;
  int crop_padding = 0;  // Fixed-size datasets: data.random_crop_padding.
  int img_size = 224;
  // Training.
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 0.75, ratio_max = 4.0 / 3.0;
  std::string train_interpolation = "random";
  double hflip = 0.5, vflip = 0.0;
  bool rand_augment = false;
  RandAugmentConfig rand_augment_config;
  double color_jitter = 0.0;      // 0 when off, and always with RandAugment (timm's rule).
  std::vector<double> mean, std;  // One per input channel.
  double re_prob = 0.0;
  std::string re_mode = "pixel";
  int re_count = 1;
  // Evaluation.
  double crop_pct = 0.9;
  std::string interpolation = "bicubic";
  int eval_resize = 248;  // floor(img_size / crop_pct): the shorter side before the centre crop.
};

// The normalisation of a fixed-size dataset: Fashion-MNIST's per-pixel mean and std, 0.5 / 0.5 otherwise.
void FixedSizeDatasetNormalization(const std::string& dataset, std::vector<double>* mean,
                                   std::vector<double>* std);

// The pipeline of `config` (its model resolved in the catalogue); errors as ValidateExperiment's.
absl::StatusOr<DataPipeline> ResolveDataPipeline(const ExperimentConfig& config);

// "train: RandomResizedCrop(...)\n  ..." and "eval: ...", one step per line, indented by two spaces.
std::string DescribeDataPipeline(const DataPipeline& pipeline);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_DATA_PIPELINE_H_
