#include "server/scheduling/gang_placement.h"

#include "gtest/gtest.h"

namespace nmsparse::server {
namespace {

NodeFree Node(int64_t id, std::vector<uint32_t> free, uint32_t total, const std::string& storage = "nfs") {
  NodeFree n;
  n.worker_id = id;
  n.free_slots = std::move(free);
  n.total_slots = total;
  n.storage = storage;
  n.kind = kCpuSlot;
  return n;
}

TEST(GangPlacementTest, AllNodesOrNone) {
  std::vector<NodeFree> nodes = {Node(1, {0, 1}, 2), Node(2, {1}, 2), Node(3, {}, 2)};
  EXPECT_FALSE(PlaceMultiNode(&nodes, 7, 3, 1).has_value());
  EXPECT_EQ(nodes[0].free_slots.size(), 2u);  // Nothing taken by a gang that does not fit.
  EXPECT_EQ(nodes[1].free_slots.size(), 1u);
  std::optional<GangPlacement> gang = PlaceMultiNode(&nodes, 7, 2, 1);
  ASSERT_TRUE(gang.has_value());
  ASSERT_EQ(gang->size(), 2u);
  EXPECT_EQ((*gang)[0].worker_id, 1);  // Node 0 is the lower id.
  EXPECT_EQ((*gang)[1].worker_id, 2);
  EXPECT_EQ((*gang)[1].slots, std::vector<uint32_t>{1});
  EXPECT_TRUE(nodes[1].free_slots.empty());
}

TEST(GangPlacementTest, OnlyWorkersOfOneSharedStorageAndKindFormAGang) {
  std::vector<NodeFree> nodes = {Node(1, {0}, 1, "a"), Node(2, {0}, 1, "b"), Node(3, {0}, 1, "")};
  EXPECT_FALSE(PlaceMultiNode(&nodes, 7, 2, 1).has_value());
  nodes.push_back(Node(4, {0}, 1, "b"));
  nodes.back().kind = kGpuSlot;
  EXPECT_FALSE(PlaceMultiNode(&nodes, 7, 2, 1).has_value());
  nodes.push_back(Node(5, {0}, 1, "b"));
  std::optional<GangPlacement> gang = PlaceMultiNode(&nodes, 7, 2, 1);
  ASSERT_TRUE(gang.has_value());
  EXPECT_EQ((*gang)[0].worker_id, 2);
  EXPECT_EQ((*gang)[1].worker_id, 5);
}

TEST(GangPlacementTest, WaitReasonCountsTheNodesThatFit) {
  std::vector<NodeFree> nodes = {Node(1, {0}, 1), Node(2, {}, 1)};
  EXPECT_EQ(GangWaitReason(nodes, 2, 1),
            "needs 2 nodes with 1 free CPU slot each on one shared storage; 1 has them");
  EXPECT_EQ(GangWaitReason({Node(1, {0, 1}, 2)}, 3, 2),
            "needs 3 nodes with 2 free CPU slots each on one shared storage; 1 has them");
  EXPECT_EQ(GangWaitReason({Node(1, {0}, 1, "")}, 2, 1),
            "needs 2 nodes with 1 free CPU slot each on one shared storage; 0 have them (no live worker "
            "declares its shared storage: nmworker --storage)");
}

// A stream of 1-node runs cannot starve a gang: the gang's reserved workers are out of the pass for runs
// behind it, so their slots free up for it.
TEST(GangPlacementTest, ReservationHoldsWorkersBackFromLaterRuns) {
  std::vector<NodeFree> nodes = {Node(1, {1}, 2), Node(2, {}, 2), Node(3, {0, 1}, 2, "")};
  std::vector<int64_t> reserved = ReserveForGang(&nodes, 2, 2);
  EXPECT_EQ(reserved, (std::vector<int64_t>{1, 2}));
  ASSERT_EQ(nodes.size(), 1u);  // Only the worker outside the gang's storage is left to smaller runs.
  EXPECT_EQ(nodes[0].worker_id, 3);
  EXPECT_TRUE(PlaceGang(&nodes, 8, 1).has_value());
  // A gang that could never fit (3 nodes, 2 workers) reserves nothing.
  std::vector<NodeFree> two = {Node(1, {0}, 1), Node(2, {0}, 1)};
  EXPECT_TRUE(ReserveForGang(&two, 3, 1).empty());
  EXPECT_EQ(two.size(), 2u);
}

}  // namespace
}  // namespace nmsparse::server
