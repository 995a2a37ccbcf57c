#include "schemas/dispatch_order.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

std::vector<std::string> InOrder(const std::vector<std::string>& hashes, const std::vector<size_t>& order) {
  std::vector<std::string> out;
  for (size_t i : order) out.push_back(hashes[i]);
  return out;
}

// The same runs written in the opposite grid order are dispatched in the same order of runs.
TEST(DispatchOrderTest, DependsOnTheRunsNotOnTheirGridOrder) {
  const std::vector<std::string> ascending = {"a1", "b2", "c3", "d4", "e5", "f6"};
  std::vector<std::string> descending(ascending.rbegin(), ascending.rend());
  EXPECT_EQ(InOrder(ascending, DispatchOrder(7, ascending)),
            InOrder(descending, DispatchOrder(7, descending)));
}

TEST(DispatchOrderTest, IsAPermutationThatTheSeedChanges) {
  std::vector<std::string> hashes;
  for (int i = 0; i < 12; ++i) hashes.push_back("hash" + std::to_string(i));
  std::vector<size_t> a = DispatchOrder(1, hashes);
  const std::vector<size_t> b = DispatchOrder(2, hashes);
  EXPECT_EQ(a, DispatchOrder(1, hashes));  // Deterministic.
  EXPECT_NE(a, b);
  std::vector<size_t> identity(hashes.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = i;
  EXPECT_NE(a, identity);  // Interleaved, not grid order (12! orders: a tie with it would be a bug).
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, identity);
}

// Runs with one hash (the dense run of each N:M column) keep their grid order among themselves.
TEST(DispatchOrderTest, EqualHashesKeepGridOrder) {
  const std::vector<size_t> order = DispatchOrder(0, {"x", "y", "x", "x"});
  std::vector<size_t> xs;
  for (size_t i : order) {
    if (i != 1) xs.push_back(i);
  }
  EXPECT_EQ(xs, (std::vector<size_t>{0, 2, 3}));
}

}  // namespace
}  // namespace nmsparse
