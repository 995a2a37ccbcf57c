// `nmtrain --export`: a run's checkpoint as the deployable model in timm's format (docs/interop.md). The
// model is built from the run's spec, its weights read from the checkpoint (or its EMA), every sparse layer
// masked at its target N:M with a hard mask (SparsityEngine::MaskWeightsAtTarget: no decayed leak; SDGF's
// last stage), and written to the output directory as
//   model.safetensors  timm's parameter names and shapes (the models register timm's names; buffers timm
//                      does not persist, e.g. SwinV2's relative-position tables, are left out);
//   config.json        timm's save_for_hf layout (worker/trainer/interop/timm_config.h);
//   sparsity.json      per sparse block: parameter, rows, location, N, M, the dimension grouped, recipe,
//                      measured density, and whether it is 2:4 along in_features;
//   README.md          a model card with the spec.
// A dense run exports the plain dense model.
#ifndef NMSPARSE_WORKER_TRAINER_INTEROP_MODEL_EXPORT_H_
#define NMSPARSE_WORKER_TRAINER_INTEROP_MODEL_EXPORT_H_

#include <string>

#include "contract/model_export_files.h"
#include "schemas/experiment_config.h"

namespace nmsparse {

struct ExportOptions {
  std::string checkpoint;  // The run's checkpoint.pt.
  std::string out_dir;     // Created when missing.
  bool ema = false;        // --weights ema: the model EMA's weights (model.ema runs only).
  bool bf16 = false;       // --dtype bf16: the weights rounded to bfloat16 (masks applied in fp32 first).
};

// The file names in the export directory (the contract with nmworker and nmctl, which send them on).
using contract::kExportCardFile;
using contract::kExportConfigFile;
using contract::kExportSparsityFile;
using contract::kExportWeightsFile;

// Throws TrainerError: kExitUsage for a spec or option that cannot be exported (a missing EMA, dynamic
// sparsity), kExitTraining when the checkpoint cannot be read or a file cannot be written.
void ExportModel(const ExperimentConfig& config, const ExportOptions& options);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_INTEROP_MODEL_EXPORT_H_
