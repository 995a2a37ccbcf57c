#include "worker/trainer/metrics/progress_ticker.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

using Clock = ProgressTicker::Clock;
using std::chrono::milliseconds;

TEST(ProgressTickerTest, FirstStepThenAtMostOncePerInterval) {
  ProgressTicker ticker(3.0);
  const Clock::time_point t0{};
  EXPECT_TRUE(ticker.Due(t0));
  EXPECT_FALSE(ticker.Due(t0 + milliseconds(2999)));
  EXPECT_TRUE(ticker.Due(t0 + milliseconds(3000)));
  EXPECT_FALSE(ticker.Due(t0 + milliseconds(3001)));
  ticker.Reset(t0 + milliseconds(5000));  // A step line went out.
  EXPECT_FALSE(ticker.Due(t0 + milliseconds(7000)));
  EXPECT_TRUE(ticker.Due(t0 + milliseconds(8000)));
}

}  // namespace
}  // namespace nmsparse
