#include "server/search/asha_policy.h"

#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nmsparse::server {
namespace {

v1::EarlyStopping Policy(const std::string& mode, uint32_t min_resource, uint32_t reduction_factor) {
  v1::EarlyStopping p;
  p.set_policy("asha");
  p.set_metric("top1");
  p.set_mode(mode);
  p.set_resource("epoch");
  p.set_min_resource(min_resource);
  p.set_reduction_factor(reduction_factor);
  return p;
}

TEST(AshaPolicyTest, RungsAreGeometricBelowMaxResource) {
  EXPECT_EQ(AshaRungs(Policy("max", 1, 3), 9), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(AshaRungs(Policy("max", 2, 2), 16), (std::vector<uint32_t>{2, 4, 8}));
  EXPECT_EQ(AshaRungs(Policy("max", 1, 3), 1), (std::vector<uint32_t>{}));
  EXPECT_EQ(AshaRungAt(Policy("max", 1, 3), 9, 3), 1);
  EXPECT_EQ(AshaRungAt(Policy("max", 1, 3), 9, 2), std::nullopt);
  EXPECT_EQ(AshaRungAt(Policy("max", 1, 3), 9, 9), std::nullopt);  // The end of training is no rung.
}

struct Report {
  const char* run;
  double value;
  bool promoted;  // Hand-computed below.
};

// Replays reports at one rung in order, as the coordinator does, and checks each decision.
void Replay(const v1::EarlyStopping& policy, int rung, uint32_t resource,
            const std::vector<Report>& reports) {
  std::vector<double> earlier;
  for (const Report& r : reports) {
    const AshaDecision d = DecideAsha(policy, rung, resource, r.value, earlier);
    EXPECT_EQ(d.promoted, r.promoted) << r.run << ": " << d.reason;
    earlier.push_back(r.value);
  }
}

// reduction_factor 3, rungs at epochs 1 and 3 of 9. At each report, n = results at the rung so far (this one
// included), keep = max(1, floor(n / 3)), cutoff = the keep-th best; the run goes on when value >= cutoff.
TEST(AshaPolicyTest, HandComputedCase) {
  const v1::EarlyStopping policy = Policy("max", 1, 3);
  Replay(policy, 0, 1,
         {
             {"A", 0.50, true},   // n=1 keep=1: [.50] cutoff .50: the first at a rung always goes on.
             {"B", 0.40, false},  // n=2 keep=1: [.50 .40] cutoff .50; .40 < .50: stopped.
             {"C", 0.60, true},   // n=3 keep=1: [.60 .50 .40] cutoff .60: promoted.
             {"D", 0.55, false},  // n=4 keep=1: cutoff .60; .55 < .60: stopped.
             {"E", 0.45, false},  // n=5 keep=1: cutoff .60: stopped.
             {"F", 0.58, true},   // n=6 keep=2: [.60 .58 .55 .50 .45 .40] cutoff .58; a tie goes on.
         });
  // Rung 1 (epoch 3): only A, C and F got there.
  Replay(policy, 1, 3,
         {
             {"A", 0.70, true},   // n=1: goes on.
             {"C", 0.65, false},  // n=2 keep=1: cutoff .70; .65 < .70: stopped.
             {"F", 0.72, true},   // n=3 keep=1: [.72 .70 .65] cutoff .72: promoted.
         });
}

TEST(AshaPolicyTest, MinModeKeepsTheSmallest) {
  Replay(Policy("min", 1, 2), 0, 1,
         {
             {"A", 1.0, true},   // n=1.
             {"B", 0.8, true},   // n=2 keep=1: [.8 1.0] cutoff .8: promoted.
             {"C", 0.9, false},  // n=3 keep=1: cutoff .8; .9 > .8: stopped.
             {"D", 0.85, true},  // n=4 keep=2: [.8 .85 .9 1.0] cutoff .85: promoted.
         });
}

TEST(AshaPolicyTest, ReasonNamesRungMetricValueAndCutoff) {
  const AshaDecision d = DecideAsha(Policy("max", 1, 3), 0, 1, 0.61, {0.68});
  EXPECT_FALSE(d.promoted);
  EXPECT_EQ(d.keep, 1);
  EXPECT_EQ(d.competitors, 2);
  EXPECT_DOUBLE_EQ(d.cutoff, 0.68);
  EXPECT_EQ(d.reason, "asha: rung 1 (epoch 1): top1 0.61 < cutoff 0.68 (best 1 of 2 go on): stopped");
}

// A NaN or infinite value (a diverged run, or a store written before the gateway refused them) ranks worst:
// it never goes on, and it never becomes the cutoff that finite values are measured against.
TEST(AshaPolicyTest, NonFiniteValuesRankWorst) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Replay(Policy("max", 1, 2), 0, 1,
         {
             {"A", nan, false},   // The first at its rung, yet not finite: stopped.
             {"B", 0.30, true},   // n=2 keep=1: [.30 NaN] cutoff .30.
             {"C", 0.20, false},  // n=3 keep=1: cutoff .30.
             {"D", inf, false},   // n=4 keep=2: [.30 .20 inf NaN] cutoff .20; inf is not a value.
             {"E", 0.25, true},   // n=5 keep=2: [.30 .25 .20 ...] cutoff .25.
         });
  Replay(Policy("min", 1, 2), 0, 1,
         {
             {"A", 0.90, true},
             {"B", -inf, false},  // A loss of -inf diverged; it does not win a minimizing rung.
             {"C", 0.80, true},   // n=3 keep=1: [.80 .90 -inf] cutoff .80.
         });
}

}  // namespace
}  // namespace nmsparse::server
