// The pickle of a torch.save file (data.pkl in its zip) read without Python, and the state dict in it as
// timm's load_state_dict picks it. LibTorch's own torch::pickle_load cannot serve: in both LibTorch 1.13 and
// 2.11 it turns collections.OrderedDict into None (it expects one only as a tensor's backward hooks), and
// every nn.Module.state_dict() is an OrderedDict.
//
// This reader builds values and never imports or calls anything. The globals it knows become values:
// collections.OrderedDict a dict, torch._utils._rebuild_tensor_v2 / _rebuild_parameter a tensor, torch's
// storage classes a dtype. Any other class becomes an opaque object named by its class, so that a training
// checkpoint's argparse.Namespace or numpy scalars do not stop its state dict from being read. Plain C++ (no
// LibTorch), so that fuzz/torch_pickle_fuzzer reaches every check.
#ifndef NMSPARSE_WORKER_TRAINER_INTEROP_TORCH_PICKLE_H_
#define NMSPARSE_WORKER_TRAINER_INTEROP_TORCH_PICKLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace nmsparse {

struct PickleValue {
  enum class Kind {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kTuple,
    kList,
    kDict,
    kGlobal,
    kStorage,
    kTensor,
    kObject
  };
  Kind kind = Kind::kNone;
  int64_t number = 0;  // kBool, kInt; kTensor: the storage offset in elements.
  double real = 0;     // kFloat.
  // kString: the text; kGlobal, kObject: "module.Name"; kStorage: its record key (data/KEY in the zip).
  std::string text;
  std::string storage_type;   // kStorage: torch's class, e.g. "FloatStorage".
  std::vector<size_t> items;  // kTuple, kList: elements; kDict: key, value, key, value...; kTensor: storage.
  std::vector<int64_t> sizes, strides;  // kTensor.
};

// Every value of a pickle, referring to one another by index (no ownership cycles, no deep destructors).
struct TorchPickle {
  std::vector<PickleValue> values;
  size_t root = 0;
};

// "a dict", "an object argparse.Namespace", ...: a value as an error message names it.
std::string PickleValueDescription(const TorchPickle& pickle, size_t index);

// The most bytes of data.pkl read: a state dict's pickle holds names and shapes, its tensors lie beside it.
constexpr size_t kMaxTorchPickleBytes = 64 << 20;

// Parses `bytes` (protocol 2 to 5, what torch.save writes). InvalidArgument naming `file` and the offset for
// an opcode it does not take (protocols 0 and 1's text opcodes among them), a truncated pickle, a stack or
// mark underflow, an operation on the wrong kind of value, a tensor or storage of the wrong form. Never
// throws.
absl::StatusOr<TorchPickle> ParseTorchPickle(std::string_view bytes, const std::string& file);

// A tensor of the state dict: its name (timm's clean_state_dict prefixes removed) and its kTensor value.
using PickledStateDict = std::vector<std::pair<std::string, size_t>>;

// The state dict as timm's load_state_dict (use_ema) picks it from a checkpoint dict: the first of
// state_dict_ema, model_ema (when not None), state_dict and model, else the dict itself; keys lose the
// "module." and "_orig_mod." prefixes of DDP and torch.compile. InvalidArgument naming `file` when the root
// is not a dict (e.g. a whole pickled nn.Module), or an entry's key is not a string or its value not a
// tensor.
absl::StatusOr<PickledStateDict> PickledStateDictOf(const TorchPickle& pickle, const std::string& file);

// The bytes per element of a torch storage class ("FloatStorage" 4), 0 for one nmsparse does not read.
int64_t TorchStorageElementSize(const std::string& storage_type);

// Whether a tensor of `sizes` and `strides` from element `offset` stays inside a storage of `numel`
// elements, with no negative size, stride or offset and no overflow.
bool TensorFitsStorage(int64_t offset, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                       int64_t numel);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_INTEROP_TORCH_PICKLE_H_
