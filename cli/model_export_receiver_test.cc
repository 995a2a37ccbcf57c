#include "cli/model_export_receiver.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/sha256_stream.h"
#include "contract/model_export_files.h"
#include "gtest/gtest.h"

namespace nmsparse::cli {
namespace {

namespace fs = std::filesystem;

std::string Digest(const std::string& data) {
  Sha256Stream sha;
  sha.Update(data.data(), data.size());
  return sha.HexDigest();
}

v1::ModelFileChunk Chunk(const std::string& file, const std::string& data, const std::string& whole = "") {
  v1::ModelFileChunk c;
  c.set_file(file);
  c.set_data(data);
  if (!whole.empty()) {
    c.set_last(true);
    c.set_sha256(Digest(whole));
  }
  return c;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ModelExportReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  // Every file but the weights, each in one chunk.
  void TakeSmallFiles(ModelExportReceiver* r) {
    for (const char* file : contract::kExportFiles) {
      if (std::string(file) == contract::kExportWeightsFile) continue;
      ASSERT_TRUE(r->Take(Chunk(file, std::string("{") + file + "}", std::string("{") + file + "}")).ok());
    }
  }
  std::vector<std::string> Listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_ / "out")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

TEST_F(ModelExportReceiverTest, AWholeExportIsRenamedIntoPlaceAtCommitOnly) {
  ModelExportReceiver r((dir_ / "out").string(), 7);
  TakeSmallFiles(&r);
  ASSERT_TRUE(r.Take(Chunk("model.safetensors", "abc")).ok());
  ASSERT_TRUE(r.Take(Chunk("model.safetensors", "def", "abcdef")).ok());
  EXPECT_EQ(Listing(), (std::vector<std::string>{".README.md.partial", ".config.json.partial",
                                                 ".model.safetensors.partial", ".sparsity.json.partial"}));
  ASSERT_TRUE(r.Commit().ok());
  EXPECT_EQ(Listing(),
            (std::vector<std::string>{"README.md", "config.json", "model.safetensors", "sparsity.json"}));
  EXPECT_EQ(Read(dir_ / "out" / "model.safetensors"), "abcdef");
  EXPECT_EQ(r.sizes().at("model.safetensors"), 6);
}

TEST_F(ModelExportReceiverTest, ANameThatIsNotAnExportFileNeverReachesTheFilesystem) {
  for (const std::string name :
       {"../escape", "/etc/passwd", "model.safetensors/../x", "", ".config.json.partial"}) {
    ModelExportReceiver r((dir_ / "out").string(), 7);
    absl::Status s = r.Take(Chunk(name, "x", "x"));
    EXPECT_TRUE(absl::IsDataLoss(s)) << name << ": " << s;
    EXPECT_NE(s.message().find("run 7's export"), std::string::npos) << s;
  }
  EXPECT_TRUE(Listing().empty());
  EXPECT_FALSE(fs::exists(dir_ / "escape"));
}

TEST_F(ModelExportReceiverTest, ADamagedFileIsRefusedAndNothingStays) {
  {
    ModelExportReceiver r((dir_ / "out").string(), 7);
    absl::Status s = r.Take(Chunk("config.json", "{}", "{ }"));
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find("config.json arrived damaged"), std::string::npos) << s;
  }
  EXPECT_TRUE(Listing().empty());
}

TEST_F(ModelExportReceiverTest, AnExportThatEndsEarlyIsNotCommittedAndLeavesNoFile) {
  {
    ModelExportReceiver r((dir_ / "out").string(), 7);
    TakeSmallFiles(&r);
    ASSERT_TRUE(r.Take(Chunk("model.safetensors", "abc")).ok());  // Cut off before its last chunk.
    absl::Status s = r.Commit();
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find("run 7's export ended without model.safetensors"), std::string::npos) << s;
  }
  EXPECT_TRUE(Listing().empty());
}

TEST_F(ModelExportReceiverTest, AFileSentTwiceOrInterleavedIsRefused) {
  ModelExportReceiver r((dir_ / "out").string(), 7);
  ASSERT_TRUE(r.Take(Chunk("config.json", "{}", "{}")).ok());
  EXPECT_TRUE(absl::IsDataLoss(r.Take(Chunk("config.json", "{}", "{}"))));
  ModelExportReceiver interleaved((dir_ / "out").string(), 8);
  ASSERT_TRUE(interleaved.Take(Chunk("model.safetensors", "a")).ok());
  EXPECT_TRUE(absl::IsDataLoss(interleaved.Take(Chunk("config.json", "{}", "{}"))));
}

}  // namespace
}  // namespace nmsparse::cli
