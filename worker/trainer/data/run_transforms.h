// The transforms of a run on stored images (imagefolder, packed, cifar10, cifar100), built from its resolved
// pipeline (schemas/data_pipeline.h, what `nmctl validate` prints): timm's training transform up to the uint8
// image (RandomResizedCrop, flips, RandAugment or ColorJitter), then on the loader threads normalisation and
// random erasing, in timm's order (erasing sees the normalised image); and the evaluation transform (resize,
// centre crop), normalised on the device as every other dataset's batches are.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_RUN_TRANSFORMS_H_
#define NMSPARSE_WORKER_TRAINER_DATA_RUN_TRANSFORMS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "schemas/data_pipeline.h"
#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/image_transform.h"

namespace nmsparse {

struct RunTransforms {
  std::unique_ptr<ImageTransform> train, eval;
  // Normalise, then erase (when the pipeline erases); null when it does not, and the device normalises.
  HostFinish train_finish;
  Normalization normalization;  // The pipeline's mean and std, for the device.
};

// InvalidArgument naming the key when the pipeline asks for what the transforms cannot do.
absl::StatusOr<RunTransforms> MakeRunTransforms(const DataPipeline& pipeline);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_RUN_TRANSFORMS_H_
