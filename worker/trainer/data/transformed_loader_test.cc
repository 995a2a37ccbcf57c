// Stored JPEGs through a per-image transform into the training loader's batches: the same batch for the same
// (seed, epoch, step) whatever the number of loader threads, and bad data replaced, counted and checked.
#include <torch/torch.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/decode_failure_log.h"
#include "worker/trainer/data/image_folder_dataset.h"
#include "worker/trainer/data/image_testing.h"
#include "worker/trainer/data/prefetch_loader.h"
#include "worker/trainer/data/synthetic_dataset.h"
#include "worker/trainer/data/transformed_dataset.h"
#include "worker/trainer/data/transforms/normalize.h"

namespace nmsparse {
namespace {

// A random side x side crop and a coin-flip mirror, drawn from the image's stream: enough randomness that a
// batch built with another image's stream differs.
class RandomCropForTest : public ImageTransform {
 public:
  explicit RandomCropForTest(int side) : side_(side) {}
  absl::StatusOr<Image> Apply(const ImageSource& source, uint64_t image_seed) const override {
    auto full = source.Decode(1);
    if (!full.ok()) return full.status();
    ImageRng rng(image_seed);
    const int top = static_cast<int>(rng() % static_cast<uint64_t>(full->height - side_ + 1));
    const int left = static_cast<int>(rng() % static_cast<uint64_t>(full->width - side_ + 1));
    const bool mirror = rng() % 2 == 1;
    Image out{side_, side_, 3, std::vector<uint8_t>(3 * side_ * side_)};
    for (int y = 0; y < side_; ++y) {
      for (int x = 0; x < side_; ++x) {
        const int sx = left + (mirror ? side_ - 1 - x : x);
        for (int c = 0; c < 3; ++c) out.row(y)[3 * x + c] = full->row(top + y)[3 * sx + c];
      }
    }
    return out;
  }
  int output_width() const override { return side_; }
  int output_height() const override { return side_; }
  std::string Describe() const override { return "random crop for the test"; }

 private:
  int side_;
};

// root/train/<3 classes>/<per_class JPEGs of 40x30>.
std::string MakeImageFolder(int per_class) {
  const std::string root = NewTestDir();
  for (const char* cls : {"a", "b", "c"}) {
    MakeDirs(root + "/train/" + cls);
    for (int i = 0; i < per_class; ++i) {
      WriteTestFile(root + "/train/" + cls + "/" + std::to_string(i) + ".jpg",
                    MakeTestJpeg(40, 30, TestJpegKind::kRgb420, 100 * (cls[0] - 'a') + i));
    }
  }
  return root;
}

std::vector<HostBatch> Batches(const Dataset& data, int threads, int epoch, HostFinish finish = nullptr) {
  TrainLoader loader(&data, /*global_batch=*/8, /*rank=*/0, /*world=*/1, /*seed=*/7, AugmentOptions{},
                     Normalization{{0.5f}, {0.5f}}, /*aug_repeats=*/0, std::move(finish));
  const int64_t steps = loader.steps_per_epoch();
  PrefetchLoader prefetch([&](int64_t position) { return loader.GetHost(epoch, position % steps); }, 0, steps,
                          threads, 2 * threads);
  std::vector<HostBatch> out;
  for (int64_t s = 0; s < steps; ++s) out.push_back(prefetch.Next());
  return out;
}

TEST(TransformedLoaderTest, SameBatchesWhateverTheLoaderThreads) {
  auto folder = ImageFolderDataset::Open(MakeImageFolder(8), "train");
  ASSERT_TRUE(folder.ok()) << folder.status();
  RandomCropForTest transform(16);
  DecodeFailureLog log;
  TransformedDataset data(folder->get(), &transform, &log);
  EXPECT_EQ(data.shape().numel(), 3 * 16 * 16);

  const std::vector<HostBatch> one = Batches(data, 1, 0);
  ASSERT_EQ(one.size(), 3u);
  for (int threads : {2, 4}) {
    const std::vector<HostBatch> many = Batches(data, threads, 0);
    ASSERT_EQ(many.size(), one.size());
    for (size_t s = 0; s < one.size(); ++s) {
      EXPECT_TRUE(torch::equal(one[s].images, many[s].images)) << threads << " threads, step " << s;
      EXPECT_TRUE(torch::equal(one[s].labels, many[s].labels)) << threads << " threads, step " << s;
    }
  }
  // Another epoch draws other crops (and another order).
  EXPECT_FALSE(torch::equal(one[0].images, Batches(data, 1, 1)[0].images));
  EXPECT_EQ(log.Count(0), 0);
}

// The host's finishing steps (normalisation, then erasing drawn from the image's stream) give float batches,
// also the same whatever the loader threads, which DeviceTransfer only moves.
TEST(TransformedLoaderTest, HostFinishGivesTheSameFloatBatchesWhateverTheLoaderThreads) {
  auto folder = ImageFolderDataset::Open(MakeImageFolder(8), "train");
  ASSERT_TRUE(folder.ok()) << folder.status();
  RandomCropForTest transform(16);
  DecodeFailureLog log;
  TransformedDataset data(folder->get(), &transform, &log);
  const int64_t n = data.shape().numel();
  // Normalises by 0.5 / 0.5, then "erases" one pixel chosen by the image's stream.
  const HostFinish finish = [n](const uint8_t* chw, float* out, uint64_t image_seed) {
    for (int64_t i = 0; i < n; ++i) out[i] = (chw[i] / 255.0f - 0.5f) / 0.5f;
    ImageRng rng(image_seed);
    out[rng() % static_cast<uint64_t>(n)] = 0.0f;
  };
  const std::vector<HostBatch> plain = Batches(data, 1, 0);
  const std::vector<HostBatch> one = Batches(data, 1, 0, finish);
  const std::vector<HostBatch> four = Batches(data, 4, 0, finish);
  ASSERT_EQ(one.size(), plain.size());
  const DeviceTransfer transfer(Normalization{{0.5f}, {0.5f}}, torch::kCPU);
  for (size_t s = 0; s < one.size(); ++s) {
    EXPECT_EQ(one[s].images.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(torch::equal(one[s].images, four[s].images)) << "step " << s;
    EXPECT_TRUE(torch::equal(transfer(one[s]).images, one[s].images)) << "step " << s;
    // Apart from the one erased pixel per image, the device's normalisation of the uint8 batch.
    const auto differs = (transfer(plain[s]).images - one[s].images).abs().gt(1e-6f);
    EXPECT_LE(differs.sum().item<int64_t>(), one[s].images.size(0)) << "step " << s;
  }
}

// The loader threads' normalisation (a table per channel) equals the device's of every byte value, bit for
// bit, with one mean and std per channel and with one for all.
TEST(TransformedLoaderTest, ByteNormalizerIsTheDevicesNormalisationBitForBit) {
  HostBatch bytes;
  bytes.images = torch::arange(256, torch::kInt64).repeat({3}).to(torch::kUInt8).reshape({1, 3, 16, 16});
  bytes.labels = torch::zeros({1}, torch::kInt64);
  for (const Normalization& n :
       {Normalization{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}}, Normalization{{0.5f}, {0.5f}}}) {
    torch::Tensor host = torch::empty({1, 3, 16, 16}, torch::kFloat32);
    ByteNormalizer(n.mean, n.std).Apply(bytes.images.data_ptr<uint8_t>(), 3, 256, host.data_ptr<float>());
    const torch::Tensor device = DeviceTransfer(n, torch::kCPU)(bytes).images;
    EXPECT_TRUE(torch::equal(host, device)) << (host - device).abs().max().item<float>();
  }
}

// A truncated JPEG and a PNG named .jpg are replaced by the next image and counted for the epoch; past the
// threshold the check fails naming them.
TEST(TransformedLoaderTest, BadImagesAreReplacedCountedAndChecked) {
  const std::string root = MakeImageFolder(8);
  const std::string jpeg = MakeTestJpeg(40, 30);
  WriteTestFile(root + "/train/b/bad_truncated.jpg", jpeg.substr(0, jpeg.size() / 2));
  WriteTestFile(root + "/train/c/bad_png.jpg", PngBytes());
  auto folder = ImageFolderDataset::Open(root, "train");
  ASSERT_TRUE(folder.ok()) << folder.status();
  ASSERT_EQ((*folder)->size(), 26);
  RandomCropForTest transform(16);
  DecodeFailureLog log;
  TransformedDataset data(folder->get(), &transform, &log);

  std::vector<int64_t> all(data.size());
  for (int64_t i = 0; i < data.size(); ++i) all[i] = i;
  const HostBatch batch = LoadHostBatch(data, all, AugmentOptions{}, 3, false, nullptr, /*epoch=*/2);
  EXPECT_EQ(batch.images.size(0), 26);
  EXPECT_EQ(log.Count(2), 2);
  EXPECT_EQ(log.Count(1), 0);
  const auto failures = log.Failures(2);
  ASSERT_EQ(failures.size(), 2u);
  // Each bad image's slot holds its replacement: the next image of the folder (wrapping), pixels and label.
  int replaced = 0;
  for (int64_t i = 0; i < data.size(); ++i) {
    const std::string where = (*folder)->Describe(i);
    if (where.find("bad_") == std::string::npos) continue;
    const int64_t next = (i + 1) % data.size();
    EXPECT_EQ(batch.labels[i].item<int64_t>(), batch.labels[next].item<int64_t>()) << where;
    std::vector<uint8_t> expected(data.shape().numel());
    data.ReadForEpoch(next, 2, HashCombine(3, i), expected.data());
    EXPECT_EQ(0, std::memcmp(expected.data(), batch.images[i].data_ptr<uint8_t>(), expected.size())) << where;
    ++replaced;
  }
  EXPECT_EQ(replaced, 2);
  // 2 of 26 is past the default 0.1%: the run would fail, naming both files.
  const absl::Status check = log.CheckThreshold(2, data.size());
  EXPECT_FALSE(check.ok());
  EXPECT_NE(check.message().find("bad_truncated.jpg"), std::string::npos) << check;
  EXPECT_NE(check.message().find("bad_png.jpg"), std::string::npos) << check;
  EXPECT_TRUE(log.CheckThreshold(2, data.size(), /*max_fraction=*/0.1).ok());
}

// When no image near an index decodes, reading throws with the reader's message (the prefetcher passes it
// on to the training loop, which fails the run).
TEST(TransformedLoaderTest, AllBadThrowsNamingTheData) {
  const std::string root = NewTestDir();
  MakeDirs(root + "/train/a");
  for (int i = 0; i < 3; ++i) WriteTestFile(root + "/train/a/" + std::to_string(i) + ".jpg", PngBytes());
  auto folder = ImageFolderDataset::Open(root, "train");
  ASSERT_TRUE(folder.ok()) << folder.status();
  RandomCropForTest transform(16);
  DecodeFailureLog log;
  TransformedDataset data(folder->get(), &transform, &log);
  std::vector<uint8_t> pixels(data.shape().numel());
  try {
    data.ReadForEpoch(0, 0, 1, pixels.data());
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no decodable image"), std::string::npos) << e.what();
  }
  EXPECT_EQ(log.Count(0), 3);
}

}  // namespace
}  // namespace nmsparse
