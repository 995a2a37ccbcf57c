// The catalogue of model architectures: every model name a spec may use and its hyper-parameters, registered
// as timm registers its models. Plain C++ so that the coordinator can validate N:M against real layer shapes
// (schemas/model_geometry.h, numel % M) without LibTorch; the trainer builds its LibTorch modules from the
// same ModelArch.
#ifndef NMSPARSE_SCHEMAS_MODEL_CATALOG_H_
#define NMSPARSE_SCHEMAS_MODEL_CATALOG_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/model_arch.h"
#include "schemas/model_geometry.h"

namespace nmsparse {

// The architecture of a catalogued model name, with img_size / in_chans / num_classes overridden when the
// arguments are non-zero. NotFound names the model and lists the known ones.
absl::StatusOr<ModelArch> LookupModel(const std::string& name, int img_size = 0, int in_chans = 0,
                                      int num_classes = 0);

// The catalogue entry of `name` (or of the entry an alias stands for) as listed, or nullptr.
const ModelArch* FindModel(const std::string& name);

// Every catalogued model name, sorted.
std::vector<std::string> ModelNames();

// timm's other names for catalogued architectures, alias -> catalogue name (docs/sweeps.md, "Model size"):
// timm's deit_{tiny,small,base}_patch16_224 (not the distilled ones, nor deit3_*, which add LayerScale) are
// its VisionTransformer with the widths of vit_{tiny,small,base}_patch16_224, and the same parameters.
const std::map<std::string, std::string>& ModelAliases();

// Every name a spec may give model.name: the catalogued ones, then the aliases, each group sorted (the JSON
// Schema's enum and the did-you-mean candidates).
std::vector<std::string> AcceptedModelNames();

// The catalogue name of `name`: itself when catalogued, the entry an alias stands for, else "".
std::string CatalogName(const std::string& name);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_MODEL_CATALOG_H_
