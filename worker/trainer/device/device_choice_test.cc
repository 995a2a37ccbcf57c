#include "worker/trainer/device/device_choice.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

TEST(ChooseDevice, CpuNeedsNoGpu) {
  auto choice = ChooseDevice("cpu", 3, 0, "");
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_FALSE(choice->cuda);
  EXPECT_EQ(DescribeDevice(*choice, "ignored"), "cpu");
}

// The agent lists the run's GPUs in rank order; rank r opens cuda:r, the r-th of them.
TEST(ChooseDevice, RankOpensItsEntryOfTheVisibleList) {
  for (int rank = 0; rank < 8; ++rank) {
    auto choice = ChooseDevice("cuda", rank, 8, "0,1,2,3,4,5,6,7");
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_TRUE(choice->cuda);
    EXPECT_EQ(choice->index, rank);
    EXPECT_EQ(choice->physical, std::to_string(rank));
  }
  auto second = ChooseDevice("cuda", 1, 2, "0,2");  // nmworker --gpus 0,2, a 2-GPU run
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->index, 1);
  EXPECT_EQ(second->physical, "2");
  EXPECT_EQ(DescribeDevice(*second, "NVIDIA H100 80GB HBM3"), "cuda:1 (GPU 2) NVIDIA H100 80GB HBM3");
  auto first = ChooseDevice("cuda", 0, 2, "0,2");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(DescribeDevice(*first, "NVIDIA H100 80GB HBM3"), "cuda:0 NVIDIA H100 80GB HBM3");
}

TEST(ChooseDevice, WithoutTheVariableTheIndexIsTheGpu) {
  auto choice = ChooseDevice("cuda", 1, 4, nullptr);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->physical, "1");
  auto explicit_index = ChooseDevice("cuda:3", 0, 4, nullptr);
  ASSERT_TRUE(explicit_index.ok()) << explicit_index.status();
  EXPECT_EQ(explicit_index->index, 3);
}

// The fault the GPU node showed: one GPU visible per rank, rank 1 asking for cuda:1.
TEST(ChooseDevice, RankBeyondTheVisibleGpusIsAnErrorNamingBoth) {
  auto choice = ChooseDevice("cuda", 1, 1, "3");
  ASSERT_FALSE(choice.ok());
  EXPECT_NE(choice.status().message().find("LOCAL_RANK 1"), std::string::npos) << choice.status();
  EXPECT_NE(choice.status().message().find("only 1 GPU(s)"), std::string::npos) << choice.status();
  EXPECT_NE(choice.status().message().find("CUDA_VISIBLE_DEVICES='3'"), std::string::npos) << choice.status();
}

TEST(ChooseDevice, AGpuRunNeverFallsBackToTheCpu) {
  auto choice = ChooseDevice("cuda", 0, 0, "0");
  ASSERT_FALSE(choice.ok());
  EXPECT_NE(choice.status().message().find("does not fall back to the CPU"), std::string::npos)
      << choice.status();
}

TEST(ChooseDevice, UnknownDevicesAreRefused) {
  for (const char* flag : {"gpu", "cuda:", "cuda:x", "cuda:-1", "CUDA", "mps"}) {
    auto choice = ChooseDevice(flag, 0, 8, nullptr);
    ASSERT_FALSE(choice.ok()) << flag;
    EXPECT_NE(choice.status().message().find(flag), std::string::npos) << choice.status();
  }
}

}  // namespace
}  // namespace nmsparse
