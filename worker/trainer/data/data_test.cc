#include <sys/stat.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "gtest/gtest.h"
#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/idx_reader.h"
#include "worker/trainer/data/shard_dataset.h"
#include "worker/trainer/data/synthetic_dataset.h"

namespace nmsparse {
namespace {

std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/" + name + "." + std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  return dir;
}

TEST(IdxReaderTest, ReadsFashionMnist) {
  auto train = LoadFashionMnist("", true);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ((*train)->size(), 60000);
  EXPECT_EQ((*train)->num_classes(), 10);
  EXPECT_EQ((*train)->shape().height, 28);
  EXPECT_EQ((*train)->shape().channels, 1);
  std::vector<uint8_t> image(784);
  EXPECT_EQ((*train)->Read(0, image.data()), 9);  // The first training image is an ankle boot.
  EXPECT_EQ((*train)->Read(1, image.data()), 0);
  auto test = LoadFashionMnist("", false);
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ((*test)->size(), 10000);
}

TEST(IdxReaderTest, ErrorsNameTheFile) {
  auto missing = LoadFashionMnist("/nonexistent/dir", true);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/train-images-idx3-ubyte.gz"),
            std::string::npos);
  const std::string bad = TempDir("idx") + "/bad.idx";
  std::ofstream(bad) << "not an idx file";
  auto array = ReadIdxFile(bad);
  ASSERT_FALSE(array.ok());
  EXPECT_NE(array.status().message().find("bad magic"), std::string::npos);
}

TEST(SyntheticDatasetTest, DeterministicFromSeed) {
  SyntheticDataset a({3, 32, 32}, 1000, 100, 7), b({3, 32, 32}, 1000, 100, 7), c({3, 32, 32}, 1000, 100, 8);
  std::vector<uint8_t> x(a.shape().numel()), y(x.size()), z(x.size());
  std::set<int64_t> labels;
  for (int i = 0; i < 100; ++i) {
    const int64_t la = a.Read(i, x.data());
    EXPECT_EQ(la, b.Read(i, y.data()));
    EXPECT_EQ(x, y);
    c.Read(i, z.data());
    EXPECT_NE(x, z);
    EXPECT_GE(la, 0);
    EXPECT_LT(la, 1000);
    labels.insert(la);
  }
  EXPECT_GT(labels.size(), 90u);
}

TEST(ShardDatasetTest, RoundTripOverSeveralShards) {
  const std::string dir = TempDir("shards");
  SyntheticDataset source({3, 8, 6}, 5, 23, 1);
  ShardWriter writer(dir, "train", source.shape(), source.num_classes(), 7);
  std::vector<uint8_t> image(source.shape().numel()), back(image.size());
  for (int i = 0; i < source.size(); ++i) {
    const int64_t label = source.Read(i, image.data());
    ASSERT_TRUE(writer.Add(image.data(), label).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  auto shards = ShardDataset::Open(dir, "train");
  ASSERT_TRUE(shards.ok()) << shards.status();
  EXPECT_EQ((*shards)->size(), 23);  // 7 + 7 + 7 + 2
  EXPECT_EQ((*shards)->shape().width, 6);
  EXPECT_EQ((*shards)->num_classes(), 5);
  for (int i = 0; i < 23; ++i) {
    EXPECT_EQ((*shards)->Read(i, back.data()), source.Read(i, image.data()));
    EXPECT_EQ(back, image) << i;
  }
  EXPECT_EQ(ShardDataset::Open(dir, "eval").status().code(), absl::StatusCode::kNotFound);
  std::ofstream(dir + "/train-99999.nmshard") << "garbage";
  auto broken = ShardDataset::Open(dir, "train");
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(broken.status().message().find("train-99999.nmshard"), std::string::npos);
}

TEST(BatchLoaderTest, PermutationIsSeededPerEpoch) {
  auto p0 = EpochPermutation(1000, 3, 0);
  EXPECT_EQ(p0, EpochPermutation(1000, 3, 0));
  EXPECT_NE(p0, EpochPermutation(1000, 3, 1));
  EXPECT_NE(p0, EpochPermutation(1000, 4, 0));
  std::set<int64_t> all(p0.begin(), p0.end());
  EXPECT_EQ(all.size(), 1000u);
  EXPECT_EQ(*all.rbegin(), 999);
}

TEST(BatchLoaderTest, RanksReadDisjointSlicesOfTheSingleProcessBatch) {
  SyntheticDataset data({1, 4, 4}, 10, 100, 5);
  const AugmentOptions augment{1, 0.5};
  TrainLoader single(&data, 16, 0, 1, 11, augment, {{0.5f}, {0.5f}});
  TrainLoader rank0(&data, 16, 0, 2, 11, augment, {{0.5f}, {0.5f}});
  TrainLoader rank1(&data, 16, 1, 2, 11, augment, {{0.5f}, {0.5f}});
  EXPECT_EQ(single.steps_per_epoch(), 6);
  EXPECT_EQ(rank0.local_batch(), 8);
  for (int step = 0; step < 3; ++step) {
    auto full = single.Get(1, step);
    auto a = rank0.Get(1, step);
    auto b = rank1.Get(1, step);
    // Rank r holds the rows r, r+2, ... of the single-process batch, augmentations included.
    EXPECT_TRUE(torch::equal(a.images, full.images.slice(0, 0, 16, 2)));
    EXPECT_TRUE(torch::equal(b.images, full.images.slice(0, 1, 16, 2)));
    EXPECT_TRUE(torch::equal(b.labels, full.labels.slice(0, 1, 16, 2)));
  }
  EXPECT_THROW(TrainLoader(&data, 15, 0, 2, 1, {}, {{0.5f}, {0.5f}}), std::invalid_argument);
}

TEST(BatchLoaderTest, FlipCropAndNormalisation) {
  std::vector<uint8_t> pixels = {0, 255, 255, 255, 0, 0, 0, 0, 0};  // 1x3x3
  InMemoryDataset data({1, 3, 3}, 2, pixels, {1});
  auto plain = LoadBatch(data, {0}, {{0.5f}, {0.5f}});
  EXPECT_FLOAT_EQ(plain.images[0][0][0][0].item<float>(), -1.0f);
  EXPECT_FLOAT_EQ(plain.images[0][0][0][1].item<float>(), 1.0f);
  EXPECT_EQ(plain.labels[0].item<int64_t>(), 1);
  auto flipped = LoadAugmentedBatch(data, {0}, {{0.5f}, {0.5f}}, {0, 1.0}, 3);
  EXPECT_TRUE(torch::equal(flipped.images, plain.images.flip({3})));
  // Padding 3 on a 3x3 image: most offsets move the image; over many seeds some crop is all padding (zeros).
  bool moved = false;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    auto cropped = LoadAugmentedBatch(data, {0}, {{0.0f}, {1.0f}}, {3, 0.0}, seed);
    moved |= cropped.images.sum().item<float>() < 2.0f;
  }
  EXPECT_TRUE(moved);
}

}  // namespace
}  // namespace nmsparse
