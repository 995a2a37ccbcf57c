// Fuzzes the reader of torch.save's data.pkl with any bytes: it refuses with a message, or returns values
// that refer only to values it holds, tensors with a storage, and a state dict whose entries are tensors.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "worker/trainer/interop/torch_pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using Kind = nmsparse::PickleValue::Kind;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto pickle = nmsparse::ParseTorchPickle(bytes, "fuzz.pth");
  if (!pickle.ok()) {
    FUZZ_CHECK(!pickle.status().message().empty(), "an error without a message");
    return 0;
  }
  const size_t n = pickle->values.size();
  FUZZ_CHECK(pickle->root < n, "root past the values");
  for (const nmsparse::PickleValue& v : pickle->values) {
    for (size_t i : v.items) FUZZ_CHECK(i < n, "an item past the values");
    if (v.kind == Kind::kDict) FUZZ_CHECK(v.items.size() % 2 == 0, "a key without a value");
    if (v.kind == Kind::kTensor) {
      FUZZ_CHECK(v.items.size() == 1 && pickle->values[v.items[0]].kind == Kind::kStorage,
                 "a tensor's storage");
      FUZZ_CHECK(v.sizes.size() == v.strides.size(), "a tensor's rank");
      nmsparse::TensorFitsStorage(v.number, v.sizes, v.strides, 1 << 20);  // UBSan: no overflow.
    }
  }
  const auto state = nmsparse::PickledStateDictOf(*pickle, "fuzz.pth");
  if (!state.ok()) {
    FUZZ_CHECK(!state.status().message().empty(), "an error without a message");
    return 0;
  }
  for (const auto& [name, index] : *state) FUZZ_CHECK(pickle->values[index].kind == Kind::kTensor, name);
  return 0;
}
