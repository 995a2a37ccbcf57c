// Bad data never stops a run silently: undecodable images are replaced by the next index (wrapping), logged
// per epoch worst first, and past the threshold the check fails naming the worst files.
#include "worker/trainer/data/decode_failure_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "worker/trainer/data/image_folder_dataset.h"
#include "worker/trainer/data/image_testing.h"

namespace nmsparse {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Image> FullDecode(const ImageSource& source) { return source.Decode(1); }

// root/train/a/{0 good, 1 PNG named .JPEG, 2 truncated, 3 good, 4 truncated}.
std::unique_ptr<ImageFolderDataset> FolderWithBadImages(std::string* root) {
  *root = NewTestDir();
  MakeDirs(*root + "/train/a");
  const std::string jpeg = MakeTestJpeg(32, 24);
  WriteTestFile(*root + "/train/a/0.jpg", jpeg);
  WriteTestFile(*root + "/train/a/1.jpg", PngBytes());
  WriteTestFile(*root + "/train/a/2.jpg", jpeg.substr(0, jpeg.size() / 2));
  WriteTestFile(*root + "/train/a/3.jpg", MakeTestJpeg(8, 8));
  WriteTestFile(*root + "/train/a/4.jpg", jpeg.substr(0, jpeg.size() / 2));
  auto ds = ImageFolderDataset::Open(*root, "train");
  EXPECT_TRUE(ds.ok()) << ds.status();
  return *std::move(ds);
}

TEST(DecodeOrReplaceTest, ReplacesAnUndecodableImageByTheNextAndLogsIt) {
  std::string root;
  auto ds = FolderWithBadImages(&root);
  DecodeFailureLog log;
  auto good = DecodeOrReplace(*ds, 0, 0, FullDecode, &log);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->index, 0);
  EXPECT_EQ(log.Count(0), 0);
  // 1 cannot be opened (PNG), 2 cannot be decoded (truncated): 3 replaces them.
  auto replaced = DecodeOrReplace(*ds, 1, 0, FullDecode, &log);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ(replaced->index, 3);
  EXPECT_EQ(replaced->image.width, 8);
  EXPECT_EQ(log.Count(0), 2);
  const auto failures = log.Failures(0);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].where, root + "/train/a/1.jpg");
  EXPECT_EQ(failures[0].message, root + "/train/a/1.jpg: a PNG image, not a JPEG");
  EXPECT_THAT(failures[1].message, HasSubstr(root + "/train/a/2.jpg: truncated"));
  // The last image wraps to the first.
  auto wrapped = DecodeOrReplace(*ds, 4, 1, FullDecode, &log);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(wrapped->index, 0);
  EXPECT_EQ(log.Count(1), 1);
}

TEST(DecodeOrReplaceTest, OtherErrorsAndAllBadAreReturned) {
  std::string root;
  auto ds = FolderWithBadImages(&root);
  DecodeFailureLog log;
  auto bad_request = DecodeOrReplace(
      *ds, 0, 0, [](const ImageSource& s) { return s.Decode(3); }, &log);
  EXPECT_TRUE(absl::IsInvalidArgument(bad_request.status())) << bad_request.status();
  auto none = DecodeOrReplace(
      *ds, 2, 0, [](const ImageSource&) -> absl::StatusOr<Image> { return absl::DataLossError("bad"); },
      &log);
  EXPECT_TRUE(absl::IsDataLoss(none.status()));
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("no decodable image in the 5 from image 2"));
}

TEST(DecodeFailureLogTest, ThresholdIsAShareOfTheEpochAndNamesTheWorstFiles) {
  DecodeFailureLog log;
  log.Record(3, "b.jpg", "b: truncated");
  EXPECT_TRUE(log.CheckThreshold(3, 1000).ok());  // 1 of 1000 is the default 0.1%.
  log.Record(3, "a.jpg", "a: corrupt");
  log.Record(3, "c.jpg", "c: PNG");
  log.Record(3, "c.jpg", "c: PNG");
  const absl::Status over = log.CheckThreshold(3, 1000);
  ASSERT_TRUE(absl::IsDataLoss(over));
  EXPECT_THAT(std::string(over.message()), HasSubstr("4 images of 1000 in epoch 3 could not be decoded"));
  // Worst first, then by name.
  EXPECT_THAT(std::string(over.message()),
              HasSubstr("c.jpg (2x): c: PNG\n  a.jpg (1x): a: corrupt\n  b.jpg (1x): b: truncated"));
  EXPECT_TRUE(log.CheckThreshold(3, 1000, 0.01).ok());
  EXPECT_TRUE(log.CheckThreshold(4, 10).ok());  // Epochs are counted apart.
}

TEST(DecodeFailureLogTest, RecordsFromManyThreads) {
  DecodeFailureLog log;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < 1000; ++i) log.Record(0, "file" + std::to_string((t * 1000 + i) % 10), "m");
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(log.Count(0), 4000);
  EXPECT_EQ(log.Failures(0).size(), 10u);
}

}  // namespace
}  // namespace nmsparse
