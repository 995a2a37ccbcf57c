#include "worker/trainer/interop/torch_save.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "worker/trainer/interop/torch_pickle.h"

namespace nmsparse {

const char kTorchSaveConvertCommand[] =
    "python -c \"import sys, timm, safetensors.torch as s; s.save_file({k: v.contiguous() for k, v in "
    "timm.models.load_state_dict(sys.argv[1]).items()}, sys.argv[2])\" FILE.pth FILE.safetensors";

const char kPickledModuleConvertCommand[] =
    "python -c \"import sys, torch, safetensors.torch as s; s.save_file({k: v.contiguous() for k, v in "
    "torch.load(sys.argv[1], weights_only=False).state_dict().items()}, sys.argv[2])\" FILE.pth "
    "FILE.safetensors";

namespace {

torch::ScalarType DtypeOf(const std::string& storage_type) {
  static const std::map<std::string, torch::ScalarType> kTypes = {
      {"FloatStorage", torch::kFloat32},     {"HalfStorage", torch::kFloat16},
      {"BFloat16Storage", torch::kBFloat16}, {"DoubleStorage", torch::kFloat64},
      {"LongStorage", torch::kInt64},        {"IntStorage", torch::kInt32},
      {"ShortStorage", torch::kInt16},       {"CharStorage", torch::kInt8},
      {"ByteStorage", torch::kUInt8},        {"BoolStorage", torch::kBool}};
  return kTypes.at(storage_type);
}

absl::Status Refused(const std::string& why, const char* command = kTorchSaveConvertCommand) {
  return absl::InvalidArgumentError(absl::StrCat(why, "; convert it to safetensors:\n  ", command));
}

// The storages' records, each read once and shared by the tensors that view it.
class Storages {
 public:
  Storages(caffe2::serialize::PyTorchStreamReader& reader, const std::string& path)
      : reader_(reader), path_(path) {}

  absl::StatusOr<torch::Tensor> Get(const PickleValue& storage) {
    if (auto it = read_.find(storage.text); it != read_.end()) return it->second;
    const int64_t element = TorchStorageElementSize(storage.storage_type);
    if (element == 0) {
      return absl::InvalidArgumentError(absl::StrCat("torch.save file ", path_, ": storage ", storage.text,
                                                     " is a ", storage.storage_type,
                                                     ", not one nmsparse reads"));
    }
    const std::string record = "data/" + storage.text;
    if (!reader_.hasRecord(record)) {
      return absl::InvalidArgumentError(absl::StrCat("torch.save file ", path_, ": no record ", record));
    }
    auto [data, bytes] = reader_.getRecord(record);
    torch::Tensor t = torch::empty({static_cast<int64_t>(bytes) / element}, DtypeOf(storage.storage_type));
    std::memcpy(t.data_ptr(), data.get(), static_cast<size_t>(t.numel() * element));
    read_.emplace(storage.text, t);
    return t;
  }

 private:
  caffe2::serialize::PyTorchStreamReader& reader_;
  const std::string& path_;
  std::map<std::string, torch::Tensor> read_;
};

// A file's bytes in memory as LibTorch's zip reader reads a file.
class BytesAdapter : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit BytesAdapter(absl::string_view bytes) : bytes_(bytes) {}
  size_t size() const override { return bytes_.size(); }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    if (pos >= bytes_.size()) return 0;
    n = std::min<size_t>(n, bytes_.size() - pos);
    std::memcpy(buf, bytes_.data() + pos, n);
    return n;
  }

 private:
  absl::string_view bytes_;
};

// torch.save records the byte order of the machine that saved the file (the archive's "byteorder": "little"
// or "big"; none before torch 1.13, when every file was little-endian) and torch.load swaps the bytes of a
// big-endian file. nmtrain copies storages as they are, so it reads only little-endian files.
absl::Status CheckByteOrder(caffe2::serialize::PyTorchStreamReader& reader, const std::string& path) {
  if (!reader.hasRecord("byteorder")) return absl::OkStatus();
  auto [data, bytes] = reader.getRecord("byteorder");
  const std::string order(static_cast<const char*>(data.get()), std::min<size_t>(bytes, 32));
  if (order == "little") return absl::OkStatus();
  return Refused(absl::StrCat("torch.save file ", path, " records its byte order as '",
                              absl::CHexEscape(order),
                              "' (archive record byteorder), not 'little': nmtrain reads little-endian "
                              "files only (torch.load on this machine swaps the bytes)"));
}

// `open` makes the zip reader of the file `path` names (LibTorch's, which throws on a damaged zip).
absl::StatusOr<NamedTensors> ReadZip(
    const std::string& path,
    const std::function<std::unique_ptr<caffe2::serialize::PyTorchStreamReader>()>& open) {
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  std::string pickled;
  try {
    reader = open();
    if (absl::Status order = CheckByteOrder(*reader, path); !order.ok()) return order;
    if (!reader->hasRecord("data.pkl"))
      return Refused(absl::StrCat("torch.save file ", path, ": a zip without data.pkl"));
    auto [data, bytes] = reader->getRecord("data.pkl");
    if (bytes > kMaxTorchPickleBytes) bytes = kMaxTorchPickleBytes + 1;  // Refused by the parser.
    pickled.assign(static_cast<const char*>(data.get()), bytes);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return absl::InvalidArgumentError(absl::StrCat("torch.save file ", path,
                                                   " is not a readable zip (damaged or ",
                                                   "truncated?): ", what.substr(0, what.find('\n'))));
  }
  absl::StatusOr<TorchPickle> pickle = ParseTorchPickle(pickled, path);
  if (!pickle.ok()) return pickle.status();
  absl::StatusOr<PickledStateDict> state = PickledStateDictOf(*pickle, path);
  if (!state.ok()) {
    // A whole pickled nn.Module (torch.save(model)) has its state dict behind Python code.
    const bool is_module = pickle->values[pickle->root].kind == PickleValue::Kind::kObject;
    return Refused(std::string(state.status().message()),
                   is_module ? kPickledModuleConvertCommand : kTorchSaveConvertCommand);
  }
  Storages storages(*reader, path);
  NamedTensors out;
  try {
    for (const auto& [name, index] : *state) {
      const PickleValue& t = pickle->values[index];
      absl::StatusOr<torch::Tensor> storage = storages.Get(pickle->values[t.items.at(0)]);
      if (!storage.ok()) return storage.status();
      if (!TensorFitsStorage(t.number, t.sizes, t.strides, storage->numel())) {
        return absl::InvalidArgumentError(
            absl::StrCat("torch.save file ", path, ": tensor '", name, "' lies outside its storage"));
      }
      out.emplace_back(name, storage->as_strided(t.sizes, t.strides, t.number).contiguous().clone());
    }
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return absl::InvalidArgumentError(absl::StrCat(
        "torch.save file ", path, ": cannot read its tensors: ", what.substr(0, what.find('\n'))));
  }
  return out;
}

}  // namespace

bool LooksLikeZip(const std::string& prefix) { return prefix.rfind("PK\x03\x04", 0) == 0; }

bool LooksLikePickle(const std::string& prefix) { return !prefix.empty() && prefix[0] == '\x80'; }

namespace {

// Refuses a file whose first bytes (`prefix`) are not torch.save's zip, naming `path`.
absl::Status CheckZipPrefix(const std::string& prefix, const std::string& path) {
  if (LooksLikePickle(prefix)) {
    return Refused(absl::StrCat("torch.save file ", path,
                                " is in torch.save's legacy format (a bare pickle: torch < 1.6 or "
                                "_use_new_zipfile_serialization=False), which nmtrain does not read"));
  }
  if (!LooksLikeZip(prefix)) {
    return Refused(
        absl::StrCat("torch.save file ", path, " is neither a zip (torch.save) nor a legacy pickle"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NamedTensors> ReadTorchSaveStateDict(const std::string& path) {
  std::string prefix(4, '\0');
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError("cannot open torch.save file " + path);
    in.read(prefix.data(), 4);
    prefix.resize(static_cast<size_t>(in.gcount()));
  }
  if (absl::Status zip = CheckZipPrefix(prefix, path); !zip.ok()) return zip;
  return ReadZip(path, [&path] { return std::make_unique<caffe2::serialize::PyTorchStreamReader>(path); });
}

absl::StatusOr<NamedTensors> ReadTorchSaveStateDictBytes(absl::string_view bytes, const std::string& path) {
  if (absl::Status zip = CheckZipPrefix(std::string(bytes.substr(0, 4)), path); !zip.ok()) return zip;
  return ReadZip(path, [bytes] {
    return std::make_unique<caffe2::serialize::PyTorchStreamReader>(std::make_shared<BytesAdapter>(bytes));
  });
}

}  // namespace nmsparse
