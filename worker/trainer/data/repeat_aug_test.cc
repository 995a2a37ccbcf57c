// Repeated augmentation: the per-rank order against timm's RepeatAugSampler (golden file), and the loader's
// batches with repeats on one and two ranks.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/repeat_aug_sampler.h"
#include "worker/trainer/data/synthetic_dataset.h"

namespace nmsparse {
namespace {

struct GoldenCase {
  int64_t n = 0;
  int repeats = 0, world = 0;
  std::vector<int64_t> permutation;
  std::vector<std::vector<int64_t>> ranks;  // timm's indices per rank.
};

std::vector<int64_t> ReadInts(std::istringstream& line) {
  std::vector<int64_t> out;
  for (int64_t v; line >> v;) out.push_back(v);
  return out;
}

std::vector<GoldenCase> ReadGolden() {
  std::ifstream in("worker/trainer/data/testdata/timm_repeat_aug.txt");
  std::vector<GoldenCase> cases;
  for (std::string text; std::getline(in, text);) {
    std::istringstream line(text);
    std::string tag;
    line >> tag;
    if (tag == "case") {
      cases.emplace_back();
      line >> cases.back().n >> cases.back().repeats >> cases.back().world;
    } else if (tag == "perm") {
      cases.back().permutation = ReadInts(line);
    } else if (tag == "rank") {
      int rank = 0;
      line >> rank;
      cases.back().ranks.push_back(ReadInts(line));
    }
  }
  return cases;
}

TEST(RepeatAugSamplerTest, EachRankReadsTimmsOrderForTheSamePermutation) {
  const std::vector<GoldenCase> cases = ReadGolden();
  ASSERT_EQ(cases.size(), 8u);
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE("n " + std::to_string(c.n) + " repeats " + std::to_string(c.repeats) + " world " +
                 std::to_string(c.world));
    ASSERT_EQ(static_cast<int64_t>(c.permutation.size()), c.n);
    ASSERT_EQ(static_cast<int>(c.ranks.size()), c.world);
    const RepeatAugSampler sampler(c.n, c.repeats, c.world);
    for (int rank = 0; rank < c.world; ++rank) {
      EXPECT_EQ(sampler.selected_per_rank(), static_cast<int64_t>(c.ranks[rank].size()));
      EXPECT_EQ(sampler.RankIndices(c.permutation, rank), c.ranks[rank]) << "rank " << rank;
    }
  }
}

// 600 images, global batch 8, 3 repeats: each rank reads 600 // 256 * 256 / world images an epoch.
constexpr int64_t kImages = 600;
constexpr int64_t kBatch = 8;
constexpr int kRepeats = 3;

TrainLoader MakeLoader(const Dataset& data, int rank, int world) {
  return TrainLoader(&data, kBatch, rank, world, /*seed=*/7,
                     AugmentOptions{/*crop_padding=*/2, /*hflip=*/0.5}, Normalization{{0.5f}, {0.5f}},
                     kRepeats);
}

TEST(RepeatAugLoaderTest, StepsPerEpochFollowTimmsSelectedSamples) {
  const SyntheticDataset data(ImageShape{1, 8, 8}, 10, kImages, 3);
  EXPECT_EQ(MakeLoader(data, 0, 1).steps_per_epoch(), 512 / kBatch);
  EXPECT_EQ(MakeLoader(data, 0, 2).steps_per_epoch(), 256 / (kBatch / 2));
  EXPECT_EQ(
      TrainLoader(&data, kBatch, 0, 1, 7, AugmentOptions{}, Normalization{{0.5f}, {0.5f}}).steps_per_epoch(),
      kImages / kBatch);
}

// A step's union over two ranks is the one-rank batch, pixel for pixel: rank r's row k is position
// r + 2k of the step. So each copy's augmentation depends on its position, not on the rank count.
TEST(RepeatAugLoaderTest, TwoRanksTogetherReadTheOneRankBatch) {
  const SyntheticDataset data(ImageShape{1, 8, 8}, 10, kImages, 3);
  const TrainLoader one = MakeLoader(data, 0, 1);
  const TrainLoader rank0 = MakeLoader(data, 0, 2);
  const TrainLoader rank1 = MakeLoader(data, 1, 2);
  for (int epoch : {0, 1}) {
    for (int64_t step : {int64_t{0}, int64_t{5}, one.steps_per_epoch() - 1}) {
      const HostBatch all = one.GetHost(epoch, step);
      const HostBatch halves[2] = {rank0.GetHost(epoch, step), rank1.GetHost(epoch, step)};
      for (int64_t j = 0; j < kBatch; ++j) {
        const HostBatch& half = halves[j % 2];
        EXPECT_TRUE(torch::equal(all.images[j], half.images[j / 2])) << "epoch " << epoch << " row " << j;
        EXPECT_EQ(all.labels[j].item<int64_t>(), half.labels[j / 2].item<int64_t>());
      }
    }
  }
}

// On one rank an image's copies are consecutive: the same image, each with its own crop and flip.
TEST(RepeatAugLoaderTest, CopiesOfAnImageGetTheirOwnAugmentation) {
  const SyntheticDataset data(ImageShape{1, 8, 8}, 10, kImages, 3);
  const TrainLoader one = MakeLoader(data, 0, 1);
  const TrainLoader plain(&data, kBatch, 0, 1, 7, AugmentOptions{}, Normalization{{0.5f}, {0.5f}}, kRepeats);
  int identical_pairs = 0, pairs = 0;
  for (int64_t step = 0; step < 6; ++step) {  // 48 positions: 16 images, 3 copies each.
    const HostBatch unaugmented = plain.GetHost(0, step);
    const HostBatch augmented = one.GetHost(0, step);
    for (int64_t j = 0; j < kBatch; ++j) {
      const int64_t position = step * kBatch + j;
      if (position % kRepeats == 0) continue;
      const int64_t prev = j - 1;  // The previous copy, in the same batch or the previous one.
      if (prev < 0) continue;
      EXPECT_TRUE(torch::equal(unaugmented.images[j], unaugmented.images[prev]));
      ++pairs;
      identical_pairs += torch::equal(augmented.images[j], augmented.images[prev]) ? 1 : 0;
    }
  }
  // Same crop offset and flip: probability 1 / (5 * 5 * 2) per pair. Fixed seeds: a few at most.
  EXPECT_GT(pairs, 20);
  EXPECT_LE(identical_pairs, 3);
}

}  // namespace
}  // namespace nmsparse
