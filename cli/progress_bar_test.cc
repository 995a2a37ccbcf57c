#include "cli/progress_bar.h"

#include "gtest/gtest.h"

namespace nmsparse::cli {
namespace {

TEST(ProgressBarTest, FillsProportionally) {
  EXPECT_EQ(RenderProgressBar(0, 4, 8, "epochs"), "[........] 0/4 epochs");
  EXPECT_EQ(RenderProgressBar(1, 4, 8, "epochs"), "[##......] 1/4 epochs");
  EXPECT_EQ(RenderProgressBar(3, 3, 6, "runs"), "[######] 3/3 runs");
}

TEST(ProgressBarTest, ClampsAndHandlesUnknownTotal) {
  EXPECT_EQ(RenderProgressBar(7, 4, 4, ""), "[####] 7/4");
  EXPECT_EQ(RenderProgressBar(2, 0, 4, "epochs"), "[....] 2/? epochs");
  EXPECT_EQ(RenderProgressBar(-1, 4, 4, ""), "[....] 0/4");
}

}  // namespace
}  // namespace nmsparse::cli
