// The state dict of a torch.save file (.pth, .bin: the zip format of torch >= 1.6) as LibTorch tensors,
// without Python: LibTorch's zip reader (caffe2's PyTorchStreamReader) for the archive, torch_pickle.h for
// its data.pkl, timm's load_state_dict for which dict is the state dict.
#ifndef NMSPARSE_WORKER_TRAINER_INTEROP_TORCH_SAVE_H_
#define NMSPARSE_WORKER_TRAINER_INTEROP_TORCH_SAVE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker/sparsity/sparsity_method.h"  // NamedTensors

namespace nmsparse {

// The one command that converts a checkpoint nmtrain cannot read into safetensors, with timm's own
// unwrapping (timm.models.load_state_dict: state_dict_ema, model_ema, state_dict, model; module. prefixes).
extern const char kTorchSaveConvertCommand[];
// The same for a whole pickled nn.Module (torch.save(model)), which timm's loader does not unwrap.
extern const char kPickledModuleConvertCommand[];

// Whether the file starts as a zip (torch.save since torch 1.6) or as a pickle (torch.save's legacy format,
// _use_new_zipfile_serialization=False, and torch < 1.6).
bool LooksLikeZip(const std::string& prefix);
bool LooksLikePickle(const std::string& prefix);

// The state dict of `path`, CPU and contiguous, in the file's order and dtypes. InvalidArgument naming the
// file (and, where that helps, the command above) for a damaged zip, a legacy pickle, a pickle that is not
// a state dict, a tensor outside its storage or of a dtype nmsparse does not read; NotFound when it cannot
// be opened. Never throws.
// A file saved on a big-endian machine (its "byteorder" record) is refused too.
absl::StatusOr<NamedTensors> ReadTorchSaveStateDict(const std::string& path);

// The same of a file's `bytes` already in memory (read once, e.g. while hashing them); `path` names it in
// errors.
absl::StatusOr<NamedTensors> ReadTorchSaveStateDictBytes(absl::string_view bytes, const std::string& path);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_INTEROP_TORCH_SAVE_H_
