// torch.save files read without Python: what LibTorch's pickler writes, timm's checkpoint wrappings picked as
// timm's load_state_dict picks them, and every damaged, hostile or legacy file refused with its name. (Files
// that torch.save and timm wrote are tested against timm in //worker/trainer/models:models_test.)
#include "worker/trainer/interop/torch_save.h"

#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "worker/trainer/interop/torch_pickle.h"

namespace nmsparse {
namespace {

using GenericDict = c10::impl::GenericDict;

std::string Path(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// `value` as torch.save's zip, written by LibTorch's own pickler (torch.load reads it).
std::string Saved(const std::string& name, const c10::IValue& value) {
  const std::vector<char> bytes = torch::pickle_save(value);
  const std::string path = Path(name);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// A zip with a hand-written data.pkl and one float32 storage "0" of `floats` elements, and torch.save's
// "byteorder" record when `byteorder` is not empty.
std::string Crafted(const std::string& name, const std::string& pickle, int floats = 4,
                    const std::string& byteorder = "") {
  const std::string path = Path(name);
  caffe2::serialize::PyTorchStreamWriter writer(path);
  if (!byteorder.empty()) writer.writeRecord("byteorder", byteorder.data(), byteorder.size());
  writer.writeRecord("data.pkl", pickle.data(), pickle.size());
  const std::vector<float> data(static_cast<size_t>(floats), 1.5f);
  writer.writeRecord("data/0", data.data(), data.size() * sizeof(float));
  writer.writeEndOfFile();
  return path;
}

GenericDict StringDict() { return GenericDict(c10::StringType::get(), c10::AnyType::get()); }

std::string ErrorOf(const std::string& path) {
  absl::StatusOr<NamedTensors> read = ReadTorchSaveStateDict(path);
  EXPECT_FALSE(read.ok()) << path;
  return read.ok() ? "" : std::string(read.status().message());
}

TEST(TorchSaveTest, AStateDictLibTorchSavedReadsBackWithItsDtypesAndViews) {
  const torch::Tensor w = torch::arange(12, torch::kFloat32).view({3, 4});
  GenericDict dict = StringDict();
  dict.insert("w", w);
  dict.insert("w_t", w.t());  // A view: the storage with its strides.
  dict.insert("h", torch::ones({2}, torch::kFloat16));
  dict.insert("idx", torch::arange(3, torch::kInt64));
  absl::StatusOr<NamedTensors> read = ReadTorchSaveStateDict(Saved("plain.pth", dict));
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 4u);
  std::map<std::string, torch::Tensor> got(read->begin(), read->end());
  EXPECT_TRUE(torch::equal(got["w"], w));
  EXPECT_TRUE(torch::equal(got["w_t"], w.t()));
  EXPECT_EQ(got["h"].scalar_type(), torch::kFloat16);
  EXPECT_TRUE(torch::equal(got["idx"], torch::arange(3, torch::kInt64)));
}

// timm's load_state_dict(use_ema=True): state_dict_ema, then model_ema when not None, then state_dict, then
// model; clean_state_dict drops module. and _orig_mod. prefixes.
TEST(TorchSaveTest, TimmsWrappingsArePickedInTimmsOrder) {
  GenericDict raw = StringDict(), ema = StringDict();
  raw.insert("module.w", torch::zeros({2}));
  ema.insert("module._orig_mod.w", torch::ones({2}));
  GenericDict both = StringDict();
  both.insert("epoch", 3);
  both.insert("state_dict", raw);
  both.insert("state_dict_ema", ema);
  absl::StatusOr<NamedTensors> read = ReadTorchSaveStateDict(Saved("both.pth", both));
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(read->at(0).first, "w");
  EXPECT_TRUE(torch::equal(read->at(0).second, torch::ones({2})));

  GenericDict model = StringDict();
  model.insert("model_ema", c10::IValue());
  model.insert("model", raw);
  read = ReadTorchSaveStateDict(Saved("model.pth", model));
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(read->at(0).first, "w");
  EXPECT_TRUE(torch::equal(read->at(0).second, torch::zeros({2})));
}

TEST(TorchSaveTest, NonTensorsAndPickledModulesAreRefusedWithTheCommandThatConverts) {
  GenericDict dict = StringDict();
  dict.insert("w", torch::zeros({2}));
  dict.insert("epoch", 3);
  const std::string path = Saved("epoch.pth", dict);
  const std::string error = ErrorOf(path);
  EXPECT_NE(error.find("torch.save file " + path + ": state dict entry 'epoch' is an int, not a tensor"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(kTorchSaveConvertCommand), std::string::npos) << error;
  // torch.save(model): the root is an object of the model's class (GLOBAL, EMPTY_TUPLE, NEWOBJ, STOP).
  const std::string module = ErrorOf(Crafted("module.pth",
                                             "\x80\x02"
                                             "ctimm.models\nVisionTransformer\n)\x81."));
  EXPECT_NE(module.find("holds an object timm.models.VisionTransformer, not a state dict"), std::string::npos)
      << module;
  EXPECT_NE(module.find(kPickledModuleConvertCommand), std::string::npos) << module;
}

TEST(TorchSaveTest, DamagedHostileAndLegacyFilesAreRefusedByName) {
  GenericDict dict = StringDict();
  dict.insert("w", torch::randn({64, 64}));
  const std::string whole = Saved("whole.pth", dict);
  std::string bytes;
  {
    std::ifstream in(whole, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  for (size_t cut : {size_t{3}, size_t{100}, bytes.size() / 2, bytes.size() - 10}) {
    const std::string path = Path("cut" + std::to_string(cut) + ".pth");
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    const std::string error = ErrorOf(path);
    EXPECT_NE(error.find(path), std::string::npos) << cut << ": " << error;
  }
  const std::string garbage = Path("garbage.bin");
  std::ofstream(garbage, std::ios::binary) << "not a checkpoint at all";
  EXPECT_NE(ErrorOf(garbage).find(garbage + " is neither a zip"), std::string::npos);
  // torch.save(..., _use_new_zipfile_serialization=False) starts with pickle's PROTO and a magic number.
  const std::string legacy = Path("legacy.pth");
  std::ofstream(legacy, std::ios::binary) << "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.";
  const std::string legacy_error = ErrorOf(legacy);
  EXPECT_NE(legacy_error.find(legacy + " is in torch.save's legacy format"), std::string::npos)
      << legacy_error;
  EXPECT_NE(legacy_error.find(kTorchSaveConvertCommand), std::string::npos);
  EXPECT_NE(ErrorOf(Path("absent.pth")).find("cannot open"), std::string::npos);

  // {'w': _rebuild_tensor_v2(storage '0' of 4 floats, offset, size, stride, False, OrderedDict())}.
  auto str = [](const std::string& s) {
    return "X" + std::string(1, static_cast<char>(s.size())) + std::string(3, '\0') + s;
  };
  auto tensor_pickle = [&](const std::string& storage_type, char offset, char size) {
    return "\x80\x02}(" + str("w") + "ctorch._utils\n_rebuild_tensor_v2\n((" + str("storage") + "ctorch\n" +
           storage_type + "\n" + str("0") + str("cpu") + "K\x04tQK" + offset + "K" + size +
           "\x85K\x01\x85\x89" + "ccollections\nOrderedDict\n)RtRu.";
  };
  const std::string fits = Crafted("fits.pth", tensor_pickle("FloatStorage", 1, 3));
  absl::StatusOr<NamedTensors> read = ReadTorchSaveStateDict(fits);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(torch::equal(read->at(0).second, torch::full({3}, 1.5f)));
  const std::string past = Crafted("past.pth", tensor_pickle("FloatStorage", 2, 3));
  EXPECT_NE(ErrorOf(past).find(past + ": tensor 'w' lies outside its storage"), std::string::npos);
  EXPECT_NE(ErrorOf(Crafted("qint.pth", tensor_pickle("QInt8Storage", 0, 1))).find("is a QInt8Storage"),
            std::string::npos);
  const std::string protocol0 = Crafted("protocol0.pth", "(dp0\n.");
  EXPECT_NE(ErrorOf(protocol0).find(protocol0 + ": data.pkl at byte 2 (opcode 0x70)"), std::string::npos)
      << ErrorOf(protocol0);
  EXPECT_NE(ErrorOf(Crafted("stop.pth", "\x80\x02}")).find("ends before its STOP"), std::string::npos);
  // torch.save's byte order record: a big-endian file (whose storages nmtrain would read swapped) is
  // refused by name, from the file and from its bytes in memory; "little" reads as a file without it.
  const std::string big = Crafted("big.pth", tensor_pickle("FloatStorage", 1, 3), 4, "big");
  const std::string big_error = ErrorOf(big);
  EXPECT_NE(big_error.find("torch.save file " + big +
                           " records its byte order as 'big' (archive record byteorder), not 'little': "
                           "nmtrain reads little-endian files only"),
            std::string::npos)
      << big_error;
  EXPECT_NE(big_error.find(kTorchSaveConvertCommand), std::string::npos);
  std::string big_bytes;
  {
    std::ifstream in(big, std::ios::binary);
    big_bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  absl::StatusOr<NamedTensors> big_in_memory = ReadTorchSaveStateDictBytes(big_bytes, big);
  ASSERT_FALSE(big_in_memory.ok());
  EXPECT_EQ(big_in_memory.status().message(), big_error);
  EXPECT_NE(
      ErrorOf(Crafted("odd.pth", tensor_pickle("FloatStorage", 1, 3), 4, "mid\ndle")).find("'mid\\ndle'"),
      std::string::npos);
  const std::string little = Crafted("little.pth", tensor_pickle("FloatStorage", 1, 3), 4, "little");
  absl::StatusOr<NamedTensors> little_read = ReadTorchSaveStateDict(little);
  ASSERT_TRUE(little_read.ok()) << little_read.status();
  EXPECT_TRUE(torch::equal(little_read->at(0).second, torch::full({3}, 1.5f)));
  EXPECT_NE(ErrorOf(Crafted("underflow.pth", "\x80\x02u.")).find("no mark"), std::string::npos);
  EXPECT_NE(ErrorOf(Crafted("memo.pth", "\x80\x02h\x07.")).find("memo 7 was never stored"),
            std::string::npos);
}

TEST(TorchSaveTest, TensorFitsStorageRefusesOverflowAndExpansion) {
  EXPECT_TRUE(TensorFitsStorage(0, {3, 4}, {4, 1}, 12));
  EXPECT_FALSE(TensorFitsStorage(1, {3, 4}, {4, 1}, 12));
  EXPECT_TRUE(TensorFitsStorage(12, {0, 4}, {4, 1}, 12));
  EXPECT_FALSE(TensorFitsStorage(0, {int64_t{1} << 40, int64_t{1} << 40}, {0, 0}, 12));
  EXPECT_FALSE(TensorFitsStorage(0, {2}, {int64_t{1} << 62}, 12));
  EXPECT_FALSE(TensorFitsStorage(-1, {1}, {1}, 12));
}

}  // namespace
}  // namespace nmsparse
