// nmshard's packed-JPEG conversions through the binary: an ImageFolder and WebDataset tars convert, and bad
// input (a PNG named .JPEG, a sample without its .cls, a non-numeric class, a truncated tar) exits 3 with a
// message naming the file or member and leaves no shard behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "worker/trainer/data/image_folder_dataset.h"
#include "worker/trainer/data/image_testing.h"
#include "worker/trainer/data/packed_jpeg_dataset.h"

namespace nmsparse {
namespace {

using ::testing::HasSubstr;

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr.
};

CommandResult Nmshard(const std::string& args) {
  CommandResult run{-1, ""};
  FILE* pipe = popen(("worker/trainer/data/nmshard " + args + " 2>&1").c_str(), "r");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string MakeFolder() {
  const std::string root = NewTestDir();
  MakeDirs(root + "/val/n01");
  MakeDirs(root + "/val/n02");
  WriteTestFile(root + "/val/n01/a.JPEG", MakeTestJpeg(20, 16, TestJpegKind::kRgb420, 1));
  WriteTestFile(root + "/val/n02/b.JPEG", MakeTestJpeg(16, 20, TestJpegKind::kGrey, 2));
  WriteTestFile(root + "/val/n02/c.JPEG", MakeTestJpeg(16, 20, TestJpegKind::kCmyk, 3));
  WriteTestFile(root + "/val/n02/LICENSE", "not an image");
  return root;
}

TEST(NmshardTest, ConvertsAnImageFolder) {
  const std::string root = MakeFolder();
  const std::string out = NewTestDir() + "/packed";
  const CommandResult run =
      Nmshard("imagefolder --src " + root + " --out " + out + " --split val --per-shard 2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("warning: skipped " + root + "/val/n02/LICENSE"));
  EXPECT_THAT(run.output, HasSubstr("wrote 3 val images in 2 packed shards"));
  auto packed = PackedJpegDataset::Open(out, "val");
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_EQ((*packed)->size(), 3);
  EXPECT_EQ((*packed)->classes(), (std::vector<std::string>{"n01", "n02"}));
  EXPECT_EQ((*packed)->Describe(2), out + "/val-00001.nmjpeg record 0 (n02/c.JPEG)");
  auto sample = (*packed)->Open(2);
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->label, 1);
  EXPECT_TRUE(sample->image->Decode(1).ok());
  EXPECT_THAT(Nmshard("info " + out).output, HasSubstr("val: 3 packed JPEGs, 2 classes"));
}

TEST(NmshardTest, PngNamedJpegStopsTheConversionNamingItAndLeavesNoShard) {
  const std::string root = MakeFolder();
  WriteTestFile(root + "/val/n01/b.JPEG", PngBytes());
  const std::string out = NewTestDir();
  // One shard per image: a.JPEG's shard is complete when b.JPEG stops the conversion.
  const CommandResult run =
      Nmshard("imagefolder --src " + root + " --out " + out + " --split val --per-shard 1");
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_THAT(run.output, HasSubstr(root + "/val/n01/b.JPEG: a PNG image, not a JPEG"));
  EXPECT_FALSE(PackedJpegDataset::Open(out, "val").ok());
  EXPECT_EQ(Nmshard("info " + out).exit_code, 3);
  const std::string listing = Nmshard("info " + out + "/; ls -A " + out).output;
  EXPECT_EQ(listing.find(".nmjpeg"), std::string::npos) << listing;
}

TEST(NmshardTest, EmptyClassFolderIsNamed) {
  const std::string root = MakeFolder();
  MakeDirs(root + "/val/n03");
  const CommandResult run = Nmshard("imagefolder --src " + root + " --out " + NewTestDir() + " --split val");
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_THAT(run.output, HasSubstr("class folder " + root + "/val/n03 has no image file"));
}

TEST(NmshardTest, ConvertsWebDatasetTars) {
  const std::string dir = NewTestDir();
  WriteTestTar(dir + "/shard-000000.tar", {{"s/000.jpg", MakeTestJpeg(10, 10, TestJpegKind::kRgb420, 1)},
                                           {"s/000.cls", "3\n"},
                                           {"s/000.json", "{}"},
                                           {"s/001.cls", "0"},
                                           {"s/001.jpg", MakeTestJpeg(12, 8, TestJpegKind::kRgb420, 2)}});
  WriteTestTar(dir + "/shard-000001.tar",
               {{"s/002.jpeg", MakeTestJpeg(6, 6, TestJpegKind::kRgb444, 3)}, {"s/002.cls", "4"}});
  const std::string out = NewTestDir();
  const CommandResult run =
      Nmshard("webdataset --src " + dir + " --out " + out + " --split train --num-classes 5");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto packed = PackedJpegDataset::Open(out, "train");
  ASSERT_TRUE(packed.ok()) << packed.status();
  ASSERT_EQ((*packed)->size(), 3);
  EXPECT_EQ((*packed)->num_classes(), 5);
  const int64_t labels[] = {3, 0, 4};
  const int widths[] = {10, 12, 6};
  for (int i = 0; i < 3; ++i) {
    auto sample = (*packed)->Open(i);
    ASSERT_TRUE(sample.ok()) << sample.status();
    EXPECT_EQ(sample->label, labels[i]);
    EXPECT_EQ(sample->image->width(), widths[i]);
  }
  EXPECT_THAT((*packed)->Describe(2), HasSubstr("(" + dir + "/shard-000001.tar:s/002)"));
}

TEST(NmshardTest, BadWebDatasetMembersAreNamed) {
  const std::string dir = NewTestDir();
  const std::string jpeg = MakeTestJpeg(10, 10);
  const std::string no_cls = dir + "/no-cls.tar", bad_cls = dir + "/bad-cls.tar", big = dir + "/big.tar";
  WriteTestTar(no_cls, {{"k1.jpg", jpeg}, {"k1.cls", "1"}, {"k2.jpg", jpeg}});
  WriteTestTar(bad_cls, {{"k1.jpg", jpeg}, {"k1.cls", "cat"}});
  WriteTestTar(big, {{"k1.jpg", jpeg}, {"k1.cls", "7"}});
  const std::string args = " --out " + NewTestDir() + " --split train --num-classes 5";
  CommandResult run = Nmshard("webdataset --src " + no_cls + args);
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_THAT(run.output, HasSubstr(no_cls + ": sample k2 has a .jpg but no .cls member"));
  run = Nmshard("webdataset --src " + bad_cls + args);
  EXPECT_THAT(run.output, HasSubstr(bad_cls + ": sample k1: k1.cls is not a class index: \"cat\""));
  run = Nmshard("webdataset --src " + big + args);
  EXPECT_THAT(run.output, HasSubstr(big + ":k1.cls: class 7 is not below --num-classes 5"));
  // A tar cut inside its second member.
  const std::string whole = *ReadWholeFile(no_cls);
  const std::string cut = dir + "/cut.tar";
  WriteTestFile(cut, whole.substr(0, 1024 + 512 + 100));
  run = Nmshard("webdataset --src " + cut + args);
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_THAT(run.output, HasSubstr(cut + ":"));
  EXPECT_EQ(Nmshard("webdataset --src " + cut + " --out x --split train").exit_code, 2);
}

}  // namespace
}  // namespace nmsparse
