// Builds the LibTorch module of a catalogued architecture (ViT or SwinV2).
#ifndef NMSPARSE_WORKER_TRAINER_MODELS_MODEL_FACTORY_H_
#define NMSPARSE_WORKER_TRAINER_MODELS_MODEL_FACTORY_H_

#include <memory>

#include "schemas/model_catalog.h"
#include "worker/trainer/models/classifier.h"
#include "worker/trainer/models/layers.h"

namespace nmsparse {

// Throws std::invalid_argument on an architecture the modules cannot build (e.g. img_size % patch_size != 0).
std::shared_ptr<ClassifierImpl> CreateModel(const ModelArch& arch, const DropOptions& drop = {});

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_MODELS_MODEL_FACTORY_H_
