// nmsparse's training transform on stored JPEGs, stage by stage: images per second and per core of
//   decode      open + full-size decode (the floor: what every image costs before any transform)
//   rrc         open + RandomResizedCrop to 224 (scale 0.08-1, ratio 3/4-4/3, random interpolation), with
//               the DCT-reduced decode when the crop allows it
//   flip        + horizontal flip 0.5
//   randaugment + RandAugment rand-m15-n2-p1-mstd0
//   full        + normalisation to float CHW and random erasing (reprob 0.25, pixel): the paper's ViT-B
//               training transform as the loader threads run it
// THREADS threads share each pass over the images (image i on thread i mod THREADS), as the loader's do.
// Prints "<stage> <images/s> <images/s/core>" per line, the second from the threads' CPU time (what a core
// gives, however loaded the machine is); bench/data_loader/run.sh compares with timm.
//
// Usage: data_loader_bench ROOT THREADS [EPOCHS=3]   (ROOT/train/<class>/*.JPEG)
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "worker/trainer/data/image_folder_dataset.h"
#include "worker/trainer/data/randaugment/rand_augment.h"
#include "worker/trainer/data/transforms/flip.h"
#include "worker/trainer/data/transforms/normalize.h"
#include "worker/trainer/data/transforms/random_erasing.h"
#include "worker/trainer/data/transforms/random_resized_crop.h"

namespace nmsparse {
namespace {

// One image through a stage; false when it failed.
using Stage = std::function<bool(const EncodedDataset& data, int64_t index, uint64_t seed)>;

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Rate {
  double wall = 0;  // Images per second of wall time, all threads.
  double cpu = 0;   // Images per CPU-second: per core, whatever else the machine runs.
};

Rate Measure(const EncodedDataset& data, int threads, int epochs, const Stage& stage) {
  std::atomic<int64_t> failures{0};
  std::vector<double> cpu(threads);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const double cpu_start = ThreadCpuSeconds();
      for (int e = 0; e < epochs; ++e) {
        for (int64_t i = t; i < data.size(); i += threads) {
          if (!stage(data, i, 1000003ULL * e + i)) failures.fetch_add(1);
        }
      }
      cpu[t] = ThreadCpuSeconds() - cpu_start;
    });
  }
  for (auto& thread : pool) thread.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failures > 0) std::fprintf(stderr, "%lld images failed\n", static_cast<long long>(failures.load()));
  double cpu_seconds = 0;
  for (double c : cpu) cpu_seconds += c;
  const double images = static_cast<double>(data.size()) * epochs;
  return {images / seconds, images / cpu_seconds};
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: data_loader_bench ROOT THREADS [EPOCHS=3]\n");
    return 2;
  }
  auto data = ImageFolderDataset::Open(argv[1], "train");
  if (!data.ok()) {
    std::fprintf(stderr, "%s\n", std::string(data.status().message()).c_str());
    return 3;
  }
  const int threads = std::max(1, std::atoi(argv[2]));
  const int epochs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 3;

  RandomResizedCropParams crop;  // 224, scale (0.08, 1), ratio (3/4, 4/3), random interpolation.
  const RandomFlip flip(RandomFlip::Axis::kHorizontal, 0.5);
  auto aa = ParseRandAugmentConfig("rand-m15-n2-p1-mstd0");
  if (!aa.ok()) return 3;
  const ImageNormalization norm;  // ImageNet's mean and std.
  const RandAugment rand_augment(*aa, RandAugmentFill(norm.mean), std::nullopt);
  RandomErasingParams erasing;
  erasing.probability = 0.25;
  erasing.mode = EraseMode::kPixel;

  // Each stage does the previous one's work, then its own.
  const int steps = 4;
  auto transform = [&](int upto) -> Stage {
    return [&, upto](const EncodedDataset& d, int64_t index, uint64_t seed) {
      auto sample = d.Open(index);
      if (!sample.ok()) return false;
      ImageRng rng(seed);
      auto image = RandomResizedCrop(*sample->image, crop, rng);
      if (!image.ok()) return false;
      if (upto >= 2) flip.Apply(*image, rng);
      if (upto >= 3) rand_augment.Apply(*image, rng);
      if (upto >= steps) {
        std::vector<float> chw(3 * static_cast<size_t>(image->width) * image->height);
        Normalize(*image, norm, chw.data());
        ImageRng erase_rng = ErasingRng(seed);
        RandomErase(erasing, chw.data(), 3, image->height, image->width, erase_rng);
      }
      return true;
    };
  };
  const Stage decode = [](const EncodedDataset& d, int64_t index, uint64_t) {
    auto sample = d.Open(index);
    return sample.ok() && sample->image->Decode(1).ok();
  };
  const std::vector<std::pair<const char*, Stage>> stages = {{"decode", decode},
                                                             {"rrc", transform(1)},
                                                             {"flip", transform(2)},
                                                             {"randaugment", transform(3)},
                                                             {"full", transform(4)}};
  Measure(**data, threads, 1, stages.back().second);  // Warm-up: the page cache, the allocator.
  for (const auto& [name, stage] : stages) {
    const Rate rate = Measure(**data, threads, epochs, stage);
    std::printf("%s %.1f %.1f\n", name, rate.wall, rate.cpu);
  }
  return 0;
}

}  // namespace
}  // namespace nmsparse

int main(int argc, char** argv) { return nmsparse::Main(argc, argv); }
