// nmsparse's training transform on stored JPEGs, stage by stage: images per second and per core of
//   decode      open + full-size decode (the floor: what every image costs before any transform)
//   rrc         open + RandomResizedCrop to 224 (scale 0.08-1, ratio 3/4-4/3, random interpolation), with
//               the DCT-reduced decode when the crop allows it
//   flip        + horizontal flip 0.5
//   randaugment + RandAugment rand-m15-n2-p1-mstd0
//   full        the paper's ViT-B training transform as the loader threads run it: the same steps by the
//               trainer's own code (MakeRunTransforms, TransformedDataset::ReadForEpoch to CHW bytes, then
//               normalisation to float and random erasing, reprob 0.25, pixel), into buffers reused per
//               thread as the loader reuses its batch's
// THREADS threads share each pass over the images (image i on thread i mod THREADS), as the loader's do.
// Prints "<stage> <images/s> <images/s/core>" per line, the second from the threads' CPU time (what a core
// gives, however loaded the machine is); bench/data_loader/run.sh compares with timm.
//
// Usage: data_loader_bench ROOT THREADS [EPOCHS=3]   (ROOT/train/<class>/*.JPEG)
#include <time.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "schemas/data_pipeline.h"
#include "schemas/rand_augment_config.h"
#include "worker/trainer/data/decode_failure_log.h"
#include "worker/trainer/data/image_folder_dataset.h"
#include "worker/trainer/data/randaugment/rand_augment.h"
#include "worker/trainer/data/run_transforms.h"
#include "worker/trainer/data/transformed_dataset.h"
#include "worker/trainer/data/transforms/flip.h"
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

  // The trainer's pipeline (schemas/data_pipeline.h defaults: 224, RRC scale 0.08-1, random interpolation,
  // hflip 0.5, ImageNet's mean and std) with the paper's ViT-B RandAugment and erasing.
  DataPipeline pipeline;
  pipeline.rand_augment = true;
  auto aa = ParseRandAugmentConfig("rand-m15-n2-p1-mstd0");
  if (!aa.ok()) return 3;
  pipeline.rand_augment_config = *aa;
  pipeline.mean = {0.485, 0.456, 0.406};
  pipeline.std = {0.229, 0.224, 0.225};
  pipeline.re_prob = 0.25;
  pipeline.re_mode = "pixel";
  auto run = MakeRunTransforms(pipeline);
  if (!run.ok()) {
    std::fprintf(stderr, "%s\n", std::string(run.status().message()).c_str());
    return 3;
  }
  DecodeFailureLog failures;
  const TransformedDataset transformed(data->get(), run->train.get(), &failures);

  // The stages before it, step by step with the same parameters (each does the previous one's work, then
  // its own), for each step's share.
  RandomResizedCropParams crop;  // 224, scale (0.08, 1), ratio (3/4, 4/3), random interpolation.
  const RandomFlip flip(RandomFlip::Axis::kHorizontal, pipeline.hflip);
  const std::array<double, 3> mean = {pipeline.mean[0], pipeline.mean[1], pipeline.mean[2]};
  const RandAugment rand_augment(*aa, RandAugmentFill(mean), std::nullopt);
  auto transform = [&](int upto) -> Stage {
    return [&, upto](const EncodedDataset& d, int64_t index, uint64_t seed) {
      auto sample = d.Open(index);
      if (!sample.ok()) return false;
      ImageRng rng(seed);
      auto image = RandomResizedCrop(*sample->image, crop, rng);
      if (!image.ok()) return false;
      if (upto >= 2) flip.Apply(*image, rng);
      if (upto >= 3) rand_augment.Apply(*image, rng);
      return true;
    };
  };
  const Stage full = [&](const EncodedDataset&, int64_t index, uint64_t seed) {
    const int64_t n = transformed.shape().numel();
    thread_local std::vector<uint8_t> chw;
    thread_local std::vector<float> out;
    chw.resize(n);
    out.resize(n);
    transformed.ReadForEpoch(index, 0, seed, chw.data());
    run->train_finish(chw.data(), out.data(), seed);
    return true;
  };
  const Stage decode = [](const EncodedDataset& d, int64_t index, uint64_t) {
    auto sample = d.Open(index);
    return sample.ok() && sample->image->Decode(1).ok();
  };
  const std::vector<std::pair<const char*, Stage>> stages = {{"decode", decode},
                                                             {"rrc", transform(1)},
                                                             {"flip", transform(2)},
                                                             {"randaugment", transform(3)},
                                                             {"full", full}};
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
