#include "server/scheduling/placement.h"

#include "gtest/gtest.h"

namespace nmsparse::server {
namespace {

std::vector<NodeFree> Nodes(std::vector<std::pair<int64_t, std::vector<uint32_t>>> spec) {
  std::vector<NodeFree> out;
  for (auto& [id, free] : spec) {
    NodeFree& n = out.emplace_back();
    n.worker_id = id;
    n.free_slots = free;
  }
  return out;
}

TEST(PlacementTest, GangTakesAllSlotsOnOneNodeOrNothing) {
  auto nodes = Nodes({{1, {0, 1}}, {2, {0, 1, 2}}});
  EXPECT_FALSE(PlaceGang(&nodes, 7, 4).has_value());  // 5 free in total, but never 4 on one node.
  EXPECT_EQ(nodes[0].free_slots.size(), 2u);          // Nothing taken by the failed attempt.
  EXPECT_EQ(nodes[1].free_slots.size(), 3u);
  auto p = PlaceGang(&nodes, 7, 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->worker_id, 2);
  EXPECT_EQ(p->slots, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_TRUE(nodes[1].free_slots.empty());
}

TEST(PlacementTest, BestFitPicksTheFullestNodeThatFits) {
  auto nodes = Nodes({{1, {0, 1, 2, 3, 4, 5, 6, 7}}, {2, {6, 7}}, {3, {5, 6, 7}}});
  auto p = PlaceGang(&nodes, 1, 1);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->worker_id, 2);  // 2 free beats 3 and 8: the empty node stays whole for a large run.
  EXPECT_EQ(p->slots, (std::vector<uint32_t>{6}));
  p = PlaceGang(&nodes, 2, 2);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->worker_id, 3);  // Node 2 has 1 left now; node 3 (3 free) is the fullest that fits 2.
  p = PlaceGang(&nodes, 3, 8);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->worker_id, 1);
}

TEST(PlacementTest, TiesGoToTheLowerWorkerAndZeroGpusMeansOne) {
  auto nodes = Nodes({{5, {0, 1}}, {4, {2, 3}}});
  auto p = PlaceGang(&nodes, 1, 0);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->worker_id, 4);
  EXPECT_EQ(p->slots, (std::vector<uint32_t>{2}));
}

TEST(PlacementTest, FreeSlotsSubtractsHeldIndices) {
  EXPECT_EQ(FreeSlots({3, 0, 2, 1}, {1, 3}), (std::vector<uint32_t>{0, 2}));
  EXPECT_TRUE(FreeSlots({0}, {0}).empty());
}

}  // namespace
}  // namespace nmsparse::server
