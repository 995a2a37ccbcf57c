// The readers of stored images on data the tests make: ImageFolder (numbering, extensions, each bad-data
// case named), packed JPEG shards (round trip, atomic writes, malformed shards), CIFAR-10/100 binary files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "worker/trainer/data/cifar_dataset.h"
#include "worker/trainer/data/directory_listing.h"
#include "worker/trainer/data/image_folder_dataset.h"
#include "worker/trainer/data/image_testing.h"
#include "worker/trainer/data/packed_jpeg_dataset.h"
#include "worker/trainer/data/packed_jpeg_writer.h"

namespace nmsparse {
namespace {

using ::testing::HasSubstr;

// root/train/{cat, dog, zebra} with two or three JPEGs each, in mixed-case extensions.
std::string MakeFolder() {
  const std::string root = NewTestDir();
  for (const std::string cls : {"zebra", "cat", "dog"}) MakeDirs(root + "/train/" + cls);
  WriteTestFile(root + "/train/cat/b.JPEG", MakeTestJpeg(20, 10, TestJpegKind::kRgb420, 1));
  WriteTestFile(root + "/train/cat/a.jpg", MakeTestJpeg(12, 12, TestJpegKind::kRgb420, 2));
  WriteTestFile(root + "/train/dog/x.Jpeg", MakeTestJpeg(16, 8, TestJpegKind::kGrey, 3));
  WriteTestFile(root + "/train/dog/y.jpeg", MakeTestJpeg(16, 16, TestJpegKind::kCmyk, 4));
  WriteTestFile(root + "/train/zebra/z.jpg", MakeTestJpeg(9, 7, TestJpegKind::kProgressive, 5));
  return root;
}

TEST(ImageFolderTest, NumbersClassesInSortedOrderAndFilesInPathOrder) {
  const std::string root = MakeFolder();
  MakeDirs(root + "/train/cat/sub");
  WriteTestFile(root + "/train/cat/sub/c.jpg", MakeTestJpeg(8, 8));
  auto ds = ImageFolderDataset::Open(root, "train");
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->classes(), (std::vector<std::string>{"cat", "dog", "zebra"}));
  EXPECT_EQ((*ds)->num_classes(), 3);
  std::vector<std::string> paths;
  std::vector<int64_t> labels;
  for (const auto& e : (*ds)->entries()) {
    paths.push_back(e.path.substr(root.size() + 7));
    labels.push_back(e.label);
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"cat/a.jpg", "cat/b.JPEG", "cat/sub/c.jpg", "dog/x.Jpeg",
                                             "dog/y.jpeg", "zebra/z.jpg"}));
  EXPECT_EQ(labels, (std::vector<int64_t>{0, 0, 0, 1, 1, 2}));
  EXPECT_TRUE((*ds)->warnings().empty());
  // Grey, CMYK and progressive JPEGs all open and decode to RGB.
  for (int64_t i = 0; i < (*ds)->size(); ++i) {
    auto sample = (*ds)->Open(i);
    ASSERT_TRUE(sample.ok()) << sample.status();
    EXPECT_EQ(sample->label, labels[i]);
    auto image = sample->image->Decode(1);
    ASSERT_TRUE(image.ok()) << image.status();
    EXPECT_EQ(image->channels, 3);
    EXPECT_EQ(image->width, sample->image->width());
  }
}

TEST(ImageFolderTest, SkipsANonImageFileWithAWarningNamingIt) {
  const std::string root = MakeFolder();
  WriteTestFile(root + "/train/dog/notes.txt", "not an image");
  auto ds = ImageFolderDataset::Open(root, "train");
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->size(), 5);
  ASSERT_EQ((*ds)->warnings().size(), 1u);
  EXPECT_THAT((*ds)->warnings()[0], HasSubstr(root + "/train/dog/notes.txt"));
}

TEST(ImageFolderTest, EmptyClassFolderIsAnErrorNamingIt) {
  const std::string root = MakeFolder();
  MakeDirs(root + "/train/empty");
  WriteTestFile(root + "/train/empty/readme.txt", "no images here");
  auto ds = ImageFolderDataset::Open(root, "train");
  ASSERT_TRUE(absl::IsFailedPrecondition(ds.status())) << ds.status();
  EXPECT_THAT(std::string(ds.status().message()), HasSubstr(root + "/train/empty has no image file"));
  EXPECT_TRUE(absl::IsNotFound(ImageFolderDataset::Open(root, "val").status()));
}

TEST(ImageFolderTest, PngNamedJpegTruncatedAndCorruptFilesAreNamed) {
  const std::string root = MakeFolder();
  WriteTestFile(root + "/train/cat/png.JPEG", PngBytes());
  const std::string jpeg = MakeTestJpeg(64, 48);
  WriteTestFile(root + "/train/cat/truncated.JPEG", jpeg.substr(0, jpeg.size() / 2));
  WriteTestFile(root + "/train/cat/zz-corrupt.JPEG", std::string("\xff\xd8\xff") + std::string(100, 'x'));
  auto ds = ImageFolderDataset::Open(root, "train");
  ASSERT_TRUE(ds.ok()) << ds.status();
  auto index_of = [&](const std::string& name) {
    for (int64_t i = 0; i < (*ds)->size(); ++i) {
      if ((*ds)->Describe(i) == root + "/train/cat/" + name) return i;
    }
    return int64_t{-1};
  };
  auto png = (*ds)->Open(index_of("png.JPEG"));
  EXPECT_TRUE(absl::IsDataLoss(png.status()));
  EXPECT_EQ(png.status().message(), root + "/train/cat/png.JPEG: a PNG image, not a JPEG");
  auto corrupt = (*ds)->Open(index_of("zz-corrupt.JPEG"));
  EXPECT_TRUE(absl::IsDataLoss(corrupt.status()));
  EXPECT_THAT(std::string(corrupt.status().message()),
              HasSubstr(root + "/train/cat/zz-corrupt.JPEG: corrupt"));
  // A truncated file's header reads; its pixels do not.
  auto truncated = (*ds)->Open(index_of("truncated.JPEG"));
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  auto pixels = truncated->image->Decode(1);
  EXPECT_TRUE(absl::IsDataLoss(pixels.status()));
  EXPECT_THAT(std::string(pixels.status().message()),
              HasSubstr(root + "/train/cat/truncated.JPEG: truncated"));
}

TEST(ImageFolderTest, UnreadableFileIsNamedAtOpen) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads a file of mode 000";
  const std::string root = MakeFolder();
  const std::string path = root + "/train/cat/a.jpg";
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  auto ds = ImageFolderDataset::Open(root, "train");
  ASSERT_TRUE(ds.ok()) << ds.status();
  auto sample = (*ds)->Open(0);
  EXPECT_TRUE(absl::IsNotFound(sample.status()));
  EXPECT_THAT(std::string(sample.status().message()),
              HasSubstr("cannot read " + path + ": Permission denied"));
}

TEST(PackedJpegTest, RoundTripKeepsBytesLabelsClassesAndNames) {
  const std::string root = MakeFolder();
  auto folder = ImageFolderDataset::Open(root, "train");
  ASSERT_TRUE(folder.ok());
  const std::string out = NewTestDir();
  PackedJpegWriter writer(out, "train", (*folder)->classes(), 2);
  std::vector<std::string> jpegs;
  for (const auto& e : (*folder)->entries()) {
    jpegs.push_back(*ReadWholeFile(e.path));
    ASSERT_TRUE(writer.Add(jpegs.back(), e.label, e.path.substr(root.size() + 7)).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(SortedVisibleNames(out),
            (std::vector<std::string>{"train-00000.nmjpeg", "train-00001.nmjpeg", "train-00002.nmjpeg"}));
  auto packed = PackedJpegDataset::Open(out, "train");
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_EQ((*packed)->size(), 5);
  EXPECT_EQ((*packed)->classes(), (*folder)->classes());
  EXPECT_EQ((*packed)->Describe(3), out + "/train-00001.nmjpeg record 1 (dog/y.jpeg)");
  for (int64_t i = 0; i < 5; ++i) {
    auto a = (*packed)->Open(i);
    auto b = (*folder)->Open(i);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status();
    EXPECT_EQ(a->label, b->label);
    auto pa = a->image->Decode(2);
    auto pb = b->image->Decode(2);
    ASSERT_TRUE(pa.ok() && pb.ok());
    EXPECT_EQ(pa->pixels, pb->pixels) << i;
  }
  EXPECT_TRUE(absl::IsNotFound(PackedJpegDataset::Open(out, "val").status()));
}

TEST(PackedJpegTest, SplitAppearsWholeAtFinishAndAnAbandonedWriterLeavesNoFile) {
  const std::string out = NewTestDir();
  {
    PackedJpegWriter writer(out, "train", {"a"}, 1);
    ASSERT_TRUE(writer.Add(MakeTestJpeg(8, 8), 0, "one").ok());
    ASSERT_TRUE(writer.Add(MakeTestJpeg(8, 8), 0, "two").ok());
    // Two complete shards, neither visible before Finish.
    EXPECT_EQ(SortedVisibleNames(out),
              (std::vector<std::string>{"train-00000.nmjpeg.tmp", "train-00001.nmjpeg.tmp"}));
  }
  EXPECT_TRUE(SortedVisibleNames(out).empty());
  {
    PackedJpegWriter writer(out, "train", {"a"}, 1);
    ASSERT_TRUE(writer.Add(MakeTestJpeg(8, 8), 0, "one").ok());
    ASSERT_TRUE(writer.Finish().ok());
  }
  EXPECT_EQ(SortedVisibleNames(out), std::vector<std::string>{"train-00000.nmjpeg"});
  // A second conversion into the same directory would mix with the first.
  PackedJpegWriter again(out, "train", {"a"}, 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(again.Add(MakeTestJpeg(8, 8), 0, "x")));
  EXPECT_EQ(SortedVisibleNames(out), std::vector<std::string>{"train-00000.nmjpeg"});
  std::remove((out + "/train-00000.nmjpeg").c_str());
  PackedJpegWriter writer(out, "train", {"a"}, 100);
  EXPECT_TRUE(absl::IsInvalidArgument(writer.Add(MakeTestJpeg(8, 8), 1, "label 1")));
}

TEST(PackedJpegTest, FailedWriteLeavesNoPartialFile) {
  const std::string out = NewTestDir();
  // The disk "fills" at 64 KiB: writes past it fail (EFBIG) instead of raising SIGXFSZ.
  signal(SIGXFSZ, SIG_IGN);
  rlimit saved;
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit limit = saved;
  limit.rlim_cur = 64 << 10;
  const std::string small = MakeTestJpeg(8, 8), large = MakeTestJpeg(512, 512);
  ASSERT_GT(large.size(), limit.rlim_cur);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  absl::Status status;
  {
    // Shard 0 (two small images) completes; shard 1's large image passes the file size limit. Both go.
    PackedJpegWriter writer(out, "train", {"a"}, 2);
    status = writer.Add(small, 0, "small");
    if (status.ok()) status = writer.Add(small, 0, "small");
    EXPECT_EQ(writer.shards(), 1);
    if (status.ok()) status = writer.Add(large, 0, "large");
    if (status.ok()) status = writer.Finish();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(".nmjpeg.tmp"));
  EXPECT_TRUE(SortedVisibleNames(out).empty());
  PackedJpegWriter nowhere(out + "/missing", "train", {"a"}, 10);
  EXPECT_FALSE(nowhere.Add(MakeTestJpeg(8, 8), 0, "x").ok());
}

TEST(PackedJpegTest, TruncatedOrForeignShardIsDataLossNamingIt) {
  const std::string out = NewTestDir();
  PackedJpegWriter writer(out, "train", {"a", "b"}, 10);
  ASSERT_TRUE(writer.Add(MakeTestJpeg(8, 8), 1, "x").ok());
  ASSERT_TRUE(writer.Finish().ok());
  const std::string path = out + "/train-00000.nmjpeg";
  const std::string bytes = *ReadWholeFile(path);
  WriteTestFile(path, bytes.substr(0, bytes.size() - 3));
  auto truncated = PackedJpegDataset::Open(out, "train");
  EXPECT_TRUE(absl::IsDataLoss(truncated.status()));
  EXPECT_THAT(std::string(truncated.status().message()), HasSubstr(path + ": header does not match"));
  WriteTestFile(path, std::string(100, 'x'));
  auto foreign = PackedJpegDataset::Open(out, "train");
  EXPECT_THAT(std::string(foreign.status().message()), HasSubstr(path + ": not a packed JPEG shard"));
}

// A CIFAR file of `count` records: label bytes then 3072 pixel bytes of value (record * 7 + byte) % 256.
std::string CifarRecords(int count, int label_bytes, int first_label) {
  std::string out;
  for (int r = 0; r < count; ++r) {
    if (label_bytes == 2) out.push_back(static_cast<char>(r % 20));  // Coarse label, unused.
    out.push_back(static_cast<char>(first_label + r));
    for (int i = 0; i < kCifarImageBytes; ++i) out.push_back(static_cast<char>((r * 7 + i) % 256));
  }
  return out;
}

TEST(CifarTest, ReadsCifar10BatchesInOrder) {
  const std::string dir = NewTestDir();
  for (int b = 1; b <= 5; ++b)
    WriteTestFile(dir + "/data_batch_" + std::to_string(b) + ".bin", CifarRecords(2, 1, b));
  WriteTestFile(dir + "/test_batch.bin", CifarRecords(3, 1, 0));
  auto train = LoadCifar(dir, CifarVariant::kCifar10, true);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ((*train)->size(), 10);
  EXPECT_EQ((*train)->num_classes(), 10);
  std::vector<uint8_t> chw(kCifarImageBytes);
  EXPECT_EQ((*train)->Read(3, chw.data()), 3);  // data_batch_2's second record: label 2 + 1.
  EXPECT_EQ(chw[5], (7 + 5) % 256);
  auto eval = CifarEncodedDataset::Open(dir, CifarVariant::kCifar10, false);
  ASSERT_TRUE(eval.ok()) << eval.status();
  EXPECT_EQ((*eval)->size(), 3);
  auto sample = (*eval)->Open(2);
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->label, 2);
  auto image = sample->image->Decode(8);  // Raw pixels: the denominator is ignored.
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 32);
  // HWC: pixel (y=1, x=2) channel 1 is CHW byte 1*1024 + 1*32 + 2.
  EXPECT_EQ(image->row(1)[3 * 2 + 1], (2 * 7 + 1024 + 32 + 2) % 256);
  EXPECT_EQ((*eval)->Describe(2), dir + "/test_batch.bin record 2");
  auto train_encoded = CifarEncodedDataset::Open(dir, CifarVariant::kCifar10, true);
  EXPECT_EQ((*train_encoded)->Describe(9), dir + "/data_batch_5.bin record 1");
}

TEST(CifarTest, ReadsCifar100FineLabels) {
  const std::string dir = NewTestDir();
  WriteTestFile(dir + "/train.bin", CifarRecords(4, 2, 90));
  WriteTestFile(dir + "/test.bin", CifarRecords(1, 2, 99));
  auto train = LoadCifar(dir, CifarVariant::kCifar100, true);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ((*train)->num_classes(), 100);
  std::vector<uint8_t> chw(kCifarImageBytes);
  EXPECT_EQ((*train)->Read(3, chw.data()), 93);
  EXPECT_EQ(chw[0], 21);
  EXPECT_EQ((*LoadCifar(dir, CifarVariant::kCifar100, false))->size(), 1);
}

TEST(CifarTest, WrongSizeMissingFileAndBadLabelAreNamed) {
  const std::string dir = NewTestDir();
  WriteTestFile(dir + "/test_batch.bin", CifarRecords(2, 1, 0).substr(1));
  auto short_file = LoadCifar(dir, CifarVariant::kCifar10, false);
  EXPECT_TRUE(absl::IsDataLoss(short_file.status()));
  EXPECT_THAT(
      std::string(short_file.status().message()),
      HasSubstr(dir + "/test_batch.bin: 6145 bytes is not a whole number of 3073-byte CIFAR-10 records"));
  auto missing = LoadCifar(dir, CifarVariant::kCifar10, true);
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr(dir + "/data_batch_1.bin"));
  WriteTestFile(dir + "/test.bin", CifarRecords(1, 2, 100));
  auto label = LoadCifar(dir, CifarVariant::kCifar100, false);
  EXPECT_THAT(std::string(label.status().message()), HasSubstr(dir + "/test.bin: record 0 has label 100"));
}

}  // namespace
}  // namespace nmsparse
