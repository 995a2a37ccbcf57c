#include "cli/row_summary.h"

#include "gtest/gtest.h"

namespace nmsparse::cli {
namespace {

// Issue 40: a 12-run sweep is listed whole; only long listings leave rows out, and say how to see them.
TEST(RowSummaryTest, ShortListingsAreWholeLongOnesSayHowToSeeTheRest) {
  const RowSummary twelve(12, /*verbose=*/false);
  EXPECT_EQ(twelve.left_out(), 0u);
  for (size_t i = 0; i < 12; ++i) EXPECT_TRUE(twelve.Shown(i)) << i;
  EXPECT_EQ(twelve.Note("run"), "");
  const RowSummary many(100, /*verbose=*/false);
  EXPECT_EQ(many.left_out(), 90u);
  EXPECT_TRUE(many.Shown(4));
  EXPECT_FALSE(many.Shown(5));
  EXPECT_TRUE(many.AfterGap(95));
  EXPECT_EQ(many.Note("run", "nmctl runs --sweep 3 lists them all"),
            "(90 more run(s) not shown: nmctl runs --sweep 3 lists them all)\n");
  EXPECT_EQ(RowSummary(100, /*verbose=*/true).left_out(), 0u);
}

}  // namespace
}  // namespace nmsparse::cli
