// config.json of an exported model in the layout of timm's save_for_hf (timm/models/_hub.py): the
// architecture timm builds it as, with the run's resolved geometry as model_args and the run's evaluation
// pipeline as pretrained_cfg, so that
//   cfg = json.load(open("config.json"))
//   timm.create_model(cfg["architecture"], pretrained=True,
//                     pretrained_cfg_overlay=dict(cfg["pretrained_cfg"], file="model.safetensors"),
//                     **cfg["model_args"])
// builds the same model with its weights. Plain C++ (no LibTorch).
#ifndef NMSPARSE_WORKER_TRAINER_INTEROP_TIMM_CONFIG_H_
#define NMSPARSE_WORKER_TRAINER_INTEROP_TIMM_CONFIG_H_

#include <string>

#include "nlohmann/json.hpp"
#include "schemas/data_pipeline.h"
#include "schemas/model_catalog.h"

namespace nmsparse {

// The timm model name to build `arch` from: its own when timm has it; for nmsparse's small catalogue entries
// (vit_nano_patch7_28, ...), the family's timm model of the same structure (model_args set every size).
std::string TimmArchitecture(const ModelArch& arch);

// timm's global_pool ("token" with a class token, else "avg") and num_features (the classifier's input).
std::string TimmGlobalPool(const ModelArch& arch);
int TimmNumFeatures(const ModelArch& arch);

// The whole config.json.
nlohmann::json TimmConfigJson(const ModelArch& arch, const DataPipeline& eval);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_INTEROP_TIMM_CONFIG_H_
