// The safetensors reader and writer: a round trip of every dtype, and a clear error naming the file for each
// kind of damaged or hostile file.
#include "worker/trainer/interop/safetensors.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "worker/trainer/interop/safetensors_header.h"

namespace nmsparse {
namespace {

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// A file of `header` JSON (with its length in front) followed by `data_bytes` zero bytes.
std::string WriteRaw(const std::string& name, const std::string& header, size_t data_bytes) {
  const std::string path = TempPath(name);
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << header << std::string(data_bytes, '\0');
  return path;
}

std::string ErrorOf(const std::string& path) {
  absl::StatusOr<SafetensorsContents> read = ReadSafetensors(path);
  EXPECT_FALSE(read.ok()) << path;
  return read.ok() ? "" : std::string(read.status().message());
}

TEST(SafetensorsTest, RoundTripOfEveryDtypeAndTheMetadata) {
  torch::manual_seed(1);
  const NamedTensors tensors = {
      {"blocks.0.attn.qkv.weight", torch::randn({6, 4})}, {"half", torch::randn({3}).to(torch::kFloat16)},
      {"bf", torch::randn({2, 2}).to(torch::kBFloat16)},  {"double", torch::randn({5}, torch::kFloat64)},
      {"scalar", torch::tensor(3.5f).reshape({})},        {"empty", torch::zeros({0, 3})},
  };
  const std::string path = TempPath("round_trip.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, tensors, {{"format", "pt"}}).ok());
  absl::StatusOr<SafetensorsContents> read = ReadSafetensors(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->metadata.at("format"), "pt");
  ASSERT_EQ(read->tensors.size(), tensors.size());
  for (const auto& [name, expected] : tensors) {
    bool found = false;
    for (const auto& [read_name, got] : read->tensors) {
      if (read_name != name) continue;
      found = true;
      EXPECT_EQ(got.scalar_type(), expected.scalar_type()) << name;
      EXPECT_EQ(got.sizes(), expected.sizes()) << name;
      EXPECT_TRUE(torch::equal(got, expected)) << name;
    }
    EXPECT_TRUE(found) << name;
  }
}

TEST(SafetensorsTest, TheHeaderIsPaddedToEightBytes) {
  std::vector<SafetensorsEntry> entries(1);
  entries[0].name = "w";
  entries[0].shape = {3};
  const std::string bytes = SafetensorsHeaderBytes(entries, {});
  EXPECT_EQ(bytes.size() % 8, 0u);
  EXPECT_EQ(entries[0].end, 12u);
}

// Each damaged file gets an error naming the file and what is wrong, never a crash.
void ExpectRefused(const std::string& path, const std::string& what) {
  const std::string error = ErrorOf(path);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find(what), std::string::npos) << error;
}

TEST(SafetensorsTest, RefusesAFileShorterThanItsHeaderLength) {
  const std::string path = TempPath("short.safetensors");
  std::ofstream(path, std::ios::binary) << "abc";
  ExpectRefused(path, "truncated");
}

TEST(SafetensorsTest, RefusesAHeaderPastTheEnd) {
  const std::string path = TempPath("past_end.safetensors");
  {
    std::ofstream out(path, std::ios::binary);
    out.write("\xff\x00\x00\x00\x00\x00\x00\x00", 8);
    out << "{}";
  }
  ExpectRefused(path, "runs past the end of the file");
}

TEST(SafetensorsTest, RefusesAHeaderThatIsNotJson) {
  ExpectRefused(WriteRaw("not_json.safetensors", "{\"w\": [", 0), "not a JSON object");
}

TEST(SafetensorsTest, RefusesOverlappingOffsets) {
  ExpectRefused(WriteRaw("overlap.safetensors",
                         R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                         12),
                "overlap");
}

TEST(SafetensorsTest, RefusesOffsetsPastTheData) {
  ExpectRefused(
      WriteRaw("out_of_range.safetensors", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8),
      "outside the file's 8 data bytes");
  ExpectRefused(
      WriteRaw("reversed.safetensors", R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 8),
      "data_offsets [8, 4]");
}

TEST(SafetensorsTest, RefusesAnUnknownDtype) {
  ExpectRefused(WriteRaw("dtype.safetensors", R"({"a":{"dtype":"I8","shape":[4],"data_offsets":[0,4]}})", 4),
                "dtype 'I8'");
}

TEST(SafetensorsTest, RefusesAShapeThatDisagreesWithItsOffsets) {
  ExpectRefused(WriteRaw("shape.safetensors", R"({"a":{"dtype":"F16","shape":[3],"data_offsets":[0,8]}})", 8),
                "needs 6 bytes, but its data_offsets span 8");
  ExpectRefused(
      WriteRaw("negative.safetensors", R"({"a":{"dtype":"F16","shape":[-1],"data_offsets":[0,8]}})", 8),
      "shape entry -1");
  ExpectRefused(WriteRaw("overflow.safetensors",
                         R"({"a":{"dtype":"F64","shape":[4611686018427387904,4611686018427387904],)"
                         R"("data_offsets":[0,8]}})",
                         8),
                "overflows");
}

TEST(SafetensorsTest, RefusesMetadataThatIsNotStrings) {
  ExpectRefused(WriteRaw("metadata.safetensors", R"({"__metadata__":{"format":1}})", 0),
                "__metadata__ key 'format'");
}

TEST(SafetensorsTest, AMissingFileIsNotFound) {
  absl::StatusOr<SafetensorsContents> read = ReadSafetensors(TempPath("absent.safetensors"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace nmsparse
