// The whole-space check of search sweeps (server/sweeps/search_space.h) with the production expander, and
// through SubmitSweep: a space whose edges include invalid runs is refused at submission, naming the point,
// the key, the value and the constraint, and nothing is stored.
#include "server/sweeps/search_space.h"

#include <string>

#include "gtest/gtest.h"
#include "schemas/sweep.h"
#include "server/sweeps/schemas_expander.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

// Issue 22's sweep: warmup_epochs can reach 15 while the base trains 10 epochs.
constexpr char kWarmupSweep[] = R"(name: warmup
base:
  model: {name: vit_micro_patch4_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 10}
random:
  schedule.warmup_epochs: {min: 0, max: 15}
  optimizer.lr: {min: 1.0e-4, max: 1.0e-2, log: true}
search: {algorithm: tpe, budget: 20, seed: 1, metric: top1, parallel: 2}
)";

v1::SweepSpec Parse(const std::string& text) {
  auto s = ParseSweepYaml(text, "sweep.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : v1::SweepSpec();
}

v1::RandomAxis* SetRange(v1::SweepSpec* spec, int axis, double min, double max) {
  v1::RandomAxis* a = spec->mutable_random(axis);
  a->set_min(min);
  a->set_max(max);
  return a;
}

TEST(SearchSpaceTest, AnEdgePastAConstraintIsRefusedNamingThePointAndTheConstraint) {
  const absl::Status s = CheckSearchSpace(ExpandWithSchemas, Parse(kWarmupSweep));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at schedule.warmup_epochs=15, optimizer.lr=0.0001"), std::string::npos) << s;
  EXPECT_NE(
      s.message().find("schedule.warmup_epochs: value 15 is out of range: must be <= schedule.epochs (10)"),
      std::string::npos)
      << s;
}

TEST(SearchSpaceTest, ASpaceWhoseEdgesAreValidPasses) {
  v1::SweepSpec spec = Parse(kWarmupSweep);
  SetRange(&spec, 0, 0, 10);
  EXPECT_TRUE(CheckSearchSpace(ExpandWithSchemas, spec).ok());
}

// Neither axis alone breaks the constraint: only the corner warmup 8 with epochs 5 does.
TEST(SearchSpaceTest, CornersCombineTheAxes) {
  v1::SweepSpec spec = Parse(kWarmupSweep);
  SetRange(&spec, 0, 0, 8);
  v1::RandomAxis* epochs = SetRange(&spec, 1, 5, 20);
  epochs->set_key("schedule.epochs");
  epochs->set_log(false);
  epochs->set_integer(true);
  const absl::Status s = CheckSearchSpace(ExpandWithSchemas, spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at schedule.warmup_epochs=8, schedule.epochs=5"), std::string::npos) << s;
}

// Past kMaxSpaceCorners combinations, each axis' edges are checked with the other axes at their middle.
TEST(SearchSpaceTest, ManyChoicesCheckEachAxisEdgesWithTheOthersInTheMiddle) {
  v1::SweepSpec spec = Parse(kWarmupSweep);
  v1::RandomAxis* lr = spec.mutable_random(1);
  lr->set_log(false);
  for (int i = 1; i <= kMaxSpaceCorners; ++i) lr->add_choices(std::to_string(i * 1e-5));
  const absl::Status s = CheckSearchSpace(ExpandWithSchemas, spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at schedule.warmup_epochs=15, optimizer.lr=0.000010"), std::string::npos) << s;
  SetRange(&spec, 0, 0, 10);
  EXPECT_TRUE(CheckSearchSpace(ExpandWithSchemas, spec).ok());
}

TEST(SearchSpaceTest, SubmitRefusesTheSpaceAndStoresNothing) {
  const std::string db = testing::TempDbPath("search_space_submit");
  testing::TestServer server(db, 10000, 5000, ExpandWithSchemas);
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = Parse(kWarmupSweep);
  v1::SubmitSweepResponse resp;
  grpc::ClientContext ctx;
  const grpc::Status s = server.coordinator().SubmitSweep(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("schedule.warmup_epochs: value 15"), std::string::npos)
      << s.error_message();
  EXPECT_EQ(testing::CountRows(db, "sweeps"), 0);
  EXPECT_EQ(testing::CountRows(db, "runs"), 0);
}

}  // namespace
}  // namespace nmsparse::server
