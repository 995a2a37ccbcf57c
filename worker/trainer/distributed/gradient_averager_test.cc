// The overlapped, bucketed gradient averaging against the plain all-reduce after backward, on 2 Gloo ranks in
// one process (a thread each, on loopback): the same averaged gradients, bit for bit (a sum of two values
// does not depend on the order), with several buckets, gradient accumulation and a parameter without one.
#include "worker/trainer/distributed/gradient_averager.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "worker/compat/torch_compat.h"
#include "worker/trainer/distributed/distributed.h"
#include "worker/trainer/trainer_testing.h"

namespace nmsparse {
namespace {

struct Net : torch::nn::Module {
  Net() {
    a = register_module("a", torch::nn::Linear(16, 32));
    b = register_module("b", torch::nn::Linear(32, 32));
    unused = register_module("unused", torch::nn::Linear(4, 4));  // Never gets a gradient.
    c = register_module("c", torch::nn::Linear(32, 8));
  }
  torch::Tensor forward(const torch::Tensor& x) { return c(torch::relu(b(torch::relu(a(x))))); }
  torch::nn::Linear a{nullptr}, b{nullptr}, unused{nullptr}, c{nullptr};
};

// Two micro-batches of rank `rank`'s data, backward into `net`'s gradients.
void Backward(Net& net, int rank, int micro_batch, GradientAverager* averager) {
  torch::manual_seed(100 * rank + micro_batch);  // Per thread: LibTorch's generator is global, so lock-step.
  const torch::Tensor x = torch::randn({8, 16});
  if (averager != nullptr) averager->Arm(micro_batch == 1);
  net.forward(x).pow(2).sum().backward();
}

TEST(GradientAveragerTest, EqualsThePlainAllReduceAfterBackward) {
  if (!NMSPARSE_HAS_GLOO) GTEST_SKIP() << "this LibTorch has no Gloo (pip's wheels): the Bazel build runs it";
  torch::manual_seed(1);
  Net plain_net, overlapped_net[2], reference_net[2];
  for (int r = 0; r < 2; ++r) {
    torch::NoGradGuard no_grad;
    auto from = plain_net.parameters();
    auto to1 = overlapped_net[r].parameters(), to2 = reference_net[r].parameters();
    for (size_t i = 0; i < from.size(); ++i) {
      to1[i].copy_(from[i]);
      to2[i].copy_(from[i]);
    }
  }
  const int port = FreeLoopbackPort();
  std::vector<std::vector<torch::Tensor>> overlapped(2), reference(2);
  std::vector<int64_t> buckets(2);
  std::vector<std::thread> ranks;
  std::mutex lockstep;  // The global generator: one rank's batches at a time.
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      DistributedEnv env;
      env.rank = r;
      env.world_size = 2;
      env.local_rank = r;
      env.master_port = port;
      Distributed dist(env, std::chrono::milliseconds(30000));
      // 1 KiB buckets: a's weight (2 KiB) alone, then the others; the unused layer shares a bucket.
      GradientAverager averager(dist, overlapped_net[r].parameters(), /*bucket_bytes=*/1024);
      buckets[r] = averager.buckets();
      for (int k = 0; k < 2; ++k) {
        std::lock_guard<std::mutex> lock(lockstep);
        Backward(overlapped_net[r], r, k, &averager);
      }
      averager.Finish();
      for (int k = 0; k < 2; ++k) {
        std::lock_guard<std::mutex> lock(lockstep);
        Backward(reference_net[r], r, k, nullptr);
      }
      dist.AverageGradients(reference_net[r].parameters());
      for (auto& p : overlapped_net[r].parameters()) overlapped[r].push_back(p.grad());
      for (auto& p : reference_net[r].parameters()) reference[r].push_back(p.grad());
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_GE(buckets[0], 3);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(overlapped[r].size(), reference[r].size());
    for (size_t i = 0; i < reference[r].size(); ++i) {
      ASSERT_EQ(overlapped[r][i].defined(), reference[r][i].defined()) << "rank " << r << " parameter " << i;
      if (reference[r][i].defined()) {
        EXPECT_TRUE(torch::equal(overlapped[r][i], reference[r][i])) << "rank " << r << " parameter " << i;
      }
    }
  }
  // Both ranks hold the average.
  for (size_t i = 0; i < reference[0].size(); ++i) {
    if (reference[0][i].defined()) {
      EXPECT_TRUE(torch::equal(overlapped[0][i], overlapped[1][i])) << i;
    }
  }
}

}  // namespace
}  // namespace nmsparse
