#include "worker/trainer/models/model_factory.h"

#include "worker/trainer/models/swin_transformer_v2.h"
#include "worker/trainer/models/vision_transformer.h"

namespace nmsparse {

std::shared_ptr<ClassifierImpl> CreateModel(const ModelArch& arch, const DropOptions& drop) {
  switch (arch.family) {
    case ModelFamily::kVit:
      return std::make_shared<VisionTransformerImpl>(arch, drop);
    case ModelFamily::kSwinV2:
      return std::make_shared<SwinTransformerV2Impl>(arch, drop);
  }
  throw std::invalid_argument("unknown model family of " + arch.name);
}

}  // namespace nmsparse
