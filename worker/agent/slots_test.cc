#include "worker/agent/slots.h"

#include "gtest/gtest.h"

namespace nmsparse::agent {
namespace {

TEST(SlotsTest, ParsesQueryOutput) {
  const auto gpus = ParseNvidiaSmiQuery("0, NVIDIA H100 80GB HBM3, 81559\n1, NVIDIA H100 80GB HBM3, 81559\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1].device, 1);
  EXPECT_EQ(gpus[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus[1].memory_mb, 81559u);
  EXPECT_TRUE(ParseNvidiaSmiQuery("NVIDIA-SMI has failed\n").empty());
}

TEST(SlotsTest, ParsesListOutput) {
  const auto gpus =
      ParseNvidiaSmiList("GPU 0: NVIDIA H200 (UUID: GPU-1234)\nGPU 3: Tesla T4 (UUID: GPU-ab)\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(gpus[1].device, 3);
  EXPECT_EQ(gpus[1].name, "Tesla T4");
}

TEST(SlotsTest, DefaultsToOneCpuSlotWithoutGpus) {
  auto node = BuildSlots("", -1, {});
  ASSERT_TRUE(node.ok());
  ASSERT_EQ(node->slots.size(), 1u);
  EXPECT_EQ(node->slots[0].kind(), v1::Slot::CPU);
  EXPECT_EQ(node->devices[0], -1);
}

TEST(SlotsTest, DetectedGpusAndExtraCpuSlots) {
  const std::vector<GpuInfo> detected = {{0, "A", 100}, {1, "B", 200}};
  auto node = BuildSlots("auto", 2, detected);
  ASSERT_TRUE(node.ok());
  ASSERT_EQ(node->slots.size(), 4u);
  EXPECT_EQ(node->slots[1].name(), "B");
  EXPECT_EQ(node->slots[1].memory_mb(), 200u);
  EXPECT_EQ(node->slots[2].kind(), v1::Slot::CPU);
  EXPECT_EQ(node->slots[3].index(), 3u);
  EXPECT_EQ(node->devices, (std::vector<int>{0, 1, -1, -1}));
}

TEST(SlotsTest, GpuListAndCount) {
  const std::vector<GpuInfo> detected = {{0, "A", 100}, {1, "B", 200}, {2, "C", 300}};
  auto list = BuildSlots("2,0", -1, detected);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->devices, (std::vector<int>{2, 0}));
  EXPECT_EQ(list->slots[0].name(), "C");
  EXPECT_EQ(list->slots[1].index(), 1u);
  auto count = BuildSlots("2", -1, {});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->devices, (std::vector<int>{0, 1}));
  auto none = BuildSlots("0", 3, detected);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->devices, (std::vector<int>{-1, -1, -1}));
}

TEST(SlotsTest, RejectsBadFlags) {
  EXPECT_FALSE(BuildSlots("a,b", -1, {}).ok());
  EXPECT_FALSE(BuildSlots("-1", -1, {}).ok());
  EXPECT_FALSE(BuildSlots("none", 0, {}).ok());
}

}  // namespace
}  // namespace nmsparse::agent
