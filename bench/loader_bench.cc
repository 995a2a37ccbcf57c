// The training input pipeline alone: images/s at 224x224x3, from shards with random crop (padding 16) and
// horizontal flip, and synthetic, through the prefetching loader with 1 and 2 threads. Baseline, measured in
// the same run: the loop nmtrain had before (one thread, in the training loop, normalising to float32 on the
// CPU). Each figure is the median of --rounds rounds.
//
//   bazel run -c opt //bench:loader_bench -- [--images 2048] [--rounds 3] [--dir /tmp/nmsparse-loader-bench]
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/prefetch_loader.h"
#include "worker/trainer/data/shard_dataset.h"
#include "worker/trainer/data/synthetic_dataset.h"

namespace nmsparse {
namespace {

constexpr int64_t kBatch = 64;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Images/s of consuming every batch of one epoch through `next`.
template <typename Next>
double Rate(int64_t images, Next next) {
  const auto start = std::chrono::steady_clock::now();
  for (int64_t done = 0; done < images; done += kBatch) next();
  return images / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Measure(const char* name, const Dataset& data, AugmentOptions augment, int rounds) {
  const TrainLoader loader(&data, kBatch, 0, 1, 7, augment, {{0.5f}, {0.5f}});
  const int64_t steps = loader.steps_per_epoch(), images = steps * kBatch;
  std::vector<double> baseline, one, two;
  for (int r = 0; r < rounds; ++r) {
    int64_t step = 0;
    baseline.push_back(Rate(images, [&] { loader.Get(r, step++); }));
    for (int threads : {1, 2}) {
      PrefetchLoader prefetch([&](int64_t p) { return loader.GetHost(r, p); }, 0, steps, threads,
                              2 * threads);
      (threads == 1 ? one : two).push_back(Rate(images, [&] { prefetch.Next(); }));
    }
  }
  std::printf("%-28s baseline %7.0f images/s | prefetch 1 thread %7.0f (%.2fx) | 2 threads %7.0f (%.2fx)\n",
              name, Median(baseline), Median(one), Median(one) / Median(baseline), Median(two),
              Median(two) / Median(baseline));
}

int Main(int argc, char** argv) {
  int64_t images = 2048;
  int rounds = 3;
  std::string dir = "/tmp/nmsparse-loader-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--images") images = std::atoll(argv[i + 1]);
    if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (flag == "--dir") dir = argv[i + 1];
  }
  torch::set_num_threads(1);
  // As nmtrain's main does: batch buffers (9.6 MB here) stay in the heap instead of being mmapped and
  // page-faulted in anew for every batch.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const ImageShape shape{3, 224, 224};
  SyntheticDataset synthetic(shape, 1000, images, 1);
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  ShardWriter writer(dir, "train", shape, 1000, 512);
  std::vector<uint8_t> pixels(shape.numel());
  for (int64_t i = 0; i < images; ++i) {
    const int64_t label = synthetic.Read(i, pixels.data());
    if (!writer.Add(pixels.data(), label).ok()) return 1;
  }
  if (!writer.Finish().ok()) return 1;
  auto shards = ShardDataset::Open(dir, "train");
  if (!shards.ok()) {
    std::fprintf(stderr, "%s\n", std::string(shards.status().message()).c_str());
    return 1;
  }
  std::printf("loader_bench: %lld images of 3x224x224 per round, batch %lld, median of %d rounds\n",
              static_cast<long long>(images), static_cast<long long>(kBatch), rounds);
  Measure("shards, crop 16 + flip", **shards, AugmentOptions{16, 0.5}, rounds);
  Measure("synthetic", synthetic, AugmentOptions{}, rounds);
  std::system(("rm -rf '" + dir + "'").c_str());
  return 0;
}

}  // namespace
}  // namespace nmsparse

int main(int argc, char** argv) { return nmsparse::Main(argc, argv); }
