#include "cli/rank_tag.h"

#include "gtest/gtest.h"

namespace nmsparse::cli {
namespace {

TEST(RankTagTest, OneNodeShowsTheRankAlone) {
  EXPECT_EQ(RankTag()(0), "0");
  EXPECT_EQ(RankTag(1, 4)(3), "3");
}

TEST(RankTagTest, SeveralNodesShowTheNodeOfEachGlobalRank) {
  const RankTag tag(2, 2);  // Node 0 has ranks 0-1, node 1 ranks 2-3.
  EXPECT_EQ(tag(0), "node0/rank0");
  EXPECT_EQ(tag(1), "node0/rank1");
  EXPECT_EQ(tag(2), "node1/rank2");
  EXPECT_EQ(tag(3), "node1/rank3");
}

TEST(RankTagTest, ReadsNodesAndRanksPerNodeFromTheSpec) {
  EXPECT_EQ(RankTag::ForSpec("resources:\n  nodes: 3\n  gpus: 2\n")(5), "node2/rank5");
  EXPECT_EQ(RankTag::ForSpec("resources:\n  gpus: 2\n")(1), "1");
  EXPECT_EQ(RankTag::ForSpec(": not yaml :")(1), "1");
}

}  // namespace
}  // namespace nmsparse::cli
