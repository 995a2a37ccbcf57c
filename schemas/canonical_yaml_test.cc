// CanonicalYaml writes the text directly; it must be byte for byte what yaml-cpp's emitter writes, for every
// value (content hashes are computed from it).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "schemas/testing/generic_paths.h"

namespace nmsparse {
namespace {

ExperimentConfig Varied() {
  ExperimentConfig c;
  c.name = "phased run";
  c.seed = 18446744073709551615u;
  c.model.name = "vit_nano_patch7_28";
  c.model.drop_path_rate = 0.1;
  c.data.dataset = "shards";
  c.data.path = "/data/shards/v1.2";
  c.optimizer.lr = 0.00030518418816570113;
  c.optimizer.eps = 1e-300;
  c.optimizer.weight_decay = 1e21;
  c.schedule.warmup_epochs = 0.5;
  c.sparsity.sparsity_type = SparsityType::kSrste;
  c.sparsity.nm = {1, 128};
  c.sparsity.locations = {SparsityLocation::kFF, SparsityLocation::kQ, SparsityLocation::kC};
  c.sparsity.phases = {{PhaseKind::kDense, 0.25}, {PhaseKind::kSparse, 0.5}, {PhaseKind::kFineTune, 0.25}};
  return c;
}

TEST(CanonicalYamlTest, EqualsTheEmittersText) {
  std::vector<ExperimentConfig> configs = {ExperimentConfig(), Varied()};
  configs.push_back(Varied());
  configs.back().sparsity.phases = {{PhaseKind::kSparse, 1.0}};
  configs.back().schedule.min_lr = -2.5;
  for (const ExperimentConfig& c : configs) EXPECT_EQ(CanonicalYaml(c), testing::CanonicalYamlByEmitter(c));
}

// Dynamic groups (§7): schedules (cycle included), update, globs (some the emitter quotes), balance groups.
TEST(CanonicalYamlTest, DynamicGroupsEqualTheEmittersText) {
  auto dynamic = ParseExperimentYaml(R"(
name: dyn
model: {name: vit_micro_patch4_28}
data: {dataset: synthetic}
sparsity:
  - {param_filter: ["*.mlp.fc1.weight", "blocks.0.*"], algorithm: rigl, sparsity: 0.9, init_method: topk,
     drop_fraction: {type: cosine, start_value: 0.3, end_value: 0, end_step: 500},
     update: {freq: 20, start: 5, stop: 400}, balance_out_groups: 2}
  - {algorithm: gmp, balance_in_groups: 4,
     sparsity: {type: cycle, start_step: 3, cycle: [{type: power, start_value: 0, end_value: 0.5, end_step: 10},
                                                    {type: exp, start_value: 0.5, decay: 0.9, end_step: 4}]}}
)",
                                     "dyn.yaml");
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  EXPECT_EQ(CanonicalYaml(*dynamic), testing::CanonicalYamlByEmitter(*dynamic));
  EXPECT_NE(CanonicalYaml(*dynamic).find("\n  dynamic:\n    - algorithm: RIGL"), std::string::npos)
      << CanonicalYaml(*dynamic);
  auto back = ParseExperimentYaml(CanonicalYaml(*dynamic), "canonical.yaml");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == *dynamic);
  // N:M configs write the empty group list.
  EXPECT_NE(CanonicalYaml(Varied()).find("\n  dynamic: []\n"), std::string::npos);
}

// User-given strings: plain ones are written directly, the others through the emitter; both must match it.
TEST(CanonicalYamlTest, StringsThatNeedQuotingMatchTheEmitter) {
  const std::vector<std::string> names = {
      "",        "run",       "a b c", "a  b",  " lead",   "trail ", "a: b",  "a #b", "#c",
      "-x",      "- x",       "x-",    "true",  "False",   "null",   "~",     "yes",  "no",
      "on",      "OFF",       "y",     "n",     "1e-08",   "0x1F",   "007",   "a,b",  "a, b",
      "[a]",     "{a: 1}",    "a'b",   "\"q\"", "back\\s", "tab\t",  "nl\nx", "ü",    "*ref",
      "&anchor", "!tag",      "|lit",  ">fold", "%pct",    "@at",    "`bt",   "?q",   ":c",
      "a:b",     "/abs/path", "./rel", ".hid",  "+1",      "a/b+c",  "x.y.z", "_u",   "A_B-C.D/E+F,G H"};
  for (const std::string& name : names) {
    ExperimentConfig c = Varied();
    c.name = name;
    c.data.path = name;
    EXPECT_EQ(CanonicalYaml(c), testing::CanonicalYamlByEmitter(c)) << "name: '" << name << "'";
  }
}

}  // namespace
}  // namespace nmsparse
