#include <sys/stat.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <tuple>

#include "gtest/gtest.h"
#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/idx_reader.h"
#include "worker/trainer/data/prefetch_loader.h"
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

TEST(IdxReaderTest, TheVariableNamesTheDirectoryWhenTheSpecDoesNot) {
  const char* before = std::getenv(kFashionMnistDirVariable);
  const std::string saved = before ? before : "";
  setenv(kFashionMnistDirVariable, "/data/fmnist", 1);
  EXPECT_EQ(FashionMnistDir(""), "/data/fmnist");
  EXPECT_EQ(FashionMnistDir("/spec/path"), "/spec/path");  // data.path wins
  unsetenv(kFashionMnistDirVariable);
  EXPECT_EQ(FashionMnistDir(""), kFashionMnistDefaultDir);
  if (before != nullptr) setenv(kFashionMnistDirVariable, saved.c_str(), 1);
}

TEST(IdxReaderTest, ErrorsNameTheFile) {
  auto missing = LoadFashionMnist("/nonexistent/dir", true);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/train-images-idx3-ubyte.gz"),
            std::string::npos);
  // It also says how to get the data.
  EXPECT_NE(missing.status().message().find("dataset-fashion-mnist"), std::string::npos) << missing.status();
  EXPECT_NE(missing.status().message().find(kFashionMnistDirVariable), std::string::npos) << missing.status();
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

// The row-wise crop and flip equal their per-pixel definition: every augmented image is the input moved by
// some (dy, dx) within the padding, maybe mirrored, with zeros where the source falls outside.
TEST(BatchLoaderTest, CropAndFlipMatchThePerPixelDefinition) {
  const ImageShape shape{3, 5, 7};
  torch::manual_seed(4);
  const auto source = torch::randint(1, 256, {shape.channels, shape.height, shape.width}, torch::kUInt8);
  std::vector<uint8_t> pixels(source.data_ptr<uint8_t>(), source.data_ptr<uint8_t>() + shape.numel());
  InMemoryDataset data(shape, 2, pixels, {1});
  const int p = 3;
  auto moved = [&](int dy, int dx, bool flip) {
    auto out = torch::zeros_like(source);
    for (int c = 0; c < shape.channels; ++c)
      for (int y = 0; y < shape.height; ++y)
        for (int x = 0; x < shape.width; ++x) {
          const int sy = y + dy, sx = (flip ? shape.width - 1 - x : x) + dx;
          if (sy >= 0 && sy < shape.height && sx >= 0 && sx < shape.width) out[c][y][x] = source[c][sy][sx];
        }
    return out;
  };
  std::set<std::tuple<int, int, bool>> seen;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const auto got = LoadHostBatch(data, {0}, {p, 0.5}, seed).images[0];
    bool matched = false;
    for (int dy = -p; dy <= p && !matched; ++dy)
      for (int dx = -p; dx <= p && !matched; ++dx)
        for (bool flip : {false, true}) {
          if (torch::equal(got, moved(dy, dx, flip))) {
            matched = true;
            seen.insert({dy, dx, flip});
            break;
          }
        }
    ASSERT_TRUE(matched) << "seed " << seed;
  }
  EXPECT_GT(seen.size(), 60u);  // Most of the 98 moves occur: the test covers the edge cases.
}

// The prefetcher hands out the same batches in the same order whatever its thread count and depth: a batch
// is a pure function of its position.
TEST(PrefetchLoaderTest, ThreadsNeverChangeTheBatches) {
  SyntheticDataset data({1, 8, 8}, 10, 200, 5);
  const TrainLoader loader(&data, 16, 0, 1, 11, AugmentOptions{2, 0.5}, {{0.5f}, {0.5f}});
  const int64_t per_epoch = loader.steps_per_epoch();
  auto make = [&](int64_t p) { return loader.GetHost(static_cast<int>(p / per_epoch), p % per_epoch); };
  const int64_t first = 3, end = 3 * per_epoch;  // Resumes mid-epoch and crosses two epoch boundaries.
  PrefetchLoader serial(make, first, end, 0, 1);
  std::vector<HostBatch> expected;
  for (int64_t p = first; p < end; ++p) expected.push_back(serial.Next());
  for (const auto& [threads, depth] : std::vector<std::pair<int, int>>{{1, 1}, {3, 2}, {4, 8}}) {
    PrefetchLoader prefetched(make, first, end, threads, depth);
    for (size_t i = 0; i < expected.size(); ++i) {
      const HostBatch got = prefetched.Next();
      ASSERT_TRUE(torch::equal(got.images, expected[i].images)) << threads << " threads, batch " << i;
      ASSERT_TRUE(torch::equal(got.labels, expected[i].labels)) << threads << " threads, batch " << i;
    }
    EXPECT_THROW(prefetched.Next(), std::out_of_range);
  }
  // And they are the loader's own batches.
  EXPECT_TRUE(torch::equal(expected[0].images, loader.GetHost(0, 3).images));
}

TEST(PrefetchLoaderTest, ABuildErrorReachesTheConsumerAtItsPosition) {
  auto make = [](int64_t p) -> HostBatch {
    if (p == 4) throw std::runtime_error("shard 4 is unreadable");
    return HostBatch{torch::full({1}, p, torch::kUInt8), torch::zeros({1}, torch::kInt64)};
  };
  PrefetchLoader loader(make, 0, 10, 2, 3);
  for (int64_t p = 0; p < 4; ++p) EXPECT_EQ(loader.Next().images.item<int>(), p);
  EXPECT_THROW(loader.Next(), std::runtime_error);
}

TEST(PrefetchLoaderTest, StopsCleanlyWithBatchesLeft) {
  SyntheticDataset data({1, 8, 8}, 10, 200, 5);
  const TrainLoader loader(&data, 16, 0, 1, 11, AugmentOptions{}, {{0.5f}, {0.5f}});
  PrefetchLoader prefetched([&](int64_t p) { return loader.GetHost(0, p % 12); }, 0, 1000, 4, 4);
  prefetched.Next();
  // Destroyed here with threads waiting for space: they must be released and joined.
}

// Normalisation on the device gives the CPU path's values: (x / 255 - mean) / std per channel.
TEST(DeviceTransferTest, NormalisesPerChannelOnTheDevice) {
  HostBatch host{torch::tensor({0, 51, 255, 102}, torch::kUInt8).view({1, 2, 1, 2}),
                 torch::tensor({3}, torch::kInt64)};
  const Batch batch = DeviceTransfer({{0.5f, 0.0f}, {0.5f, 2.0f}}, torch::kCPU)(host);
  const auto expected = torch::tensor({-1.0f, -0.6f, 0.5f, 0.2f}).view({1, 2, 1, 2});
  EXPECT_TRUE(torch::allclose(batch.images, expected, 1e-6, 1e-6)) << batch.images;
  EXPECT_EQ(batch.labels.item<int64_t>(), 3);
}

}  // namespace
}  // namespace nmsparse
