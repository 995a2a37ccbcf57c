// SRigL's constant fan-in arithmetic against golden_srigl.json (the authors' RigLConstFanScheduler at
// calgaryml/condensed-sparsity@3052bb8b, run on CPU): fan-in, drop fraction, the scheduler's counters and
// three updates (generic, one ablated neuron, an over-full row).
//
// Tolerances: masks, ablated rows and fan-ins exact. An update copies or zeroes weights and never computes
// one, so weights after an update are exact too. The drop fraction is one cosine in double precision,
// within a few ulps of Python's math.cos: rtol 1e-12.
#include "worker/sparsity/dynamic/const_fan_in.h"

#include <fstream>
#include <functional>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace nmsparse {
namespace dynamic {
namespace {

using nlohmann::json;

json Golden() {
  std::ifstream in("worker/sparsity/testdata/recipes/golden_srigl.json");
  EXPECT_TRUE(in.good()) << "golden_srigl.json missing";
  return in.good() ? json::parse(in) : json::object();
}

torch::Tensor ToTensor(const json& nested) {
  std::vector<int64_t> shape;
  for (const json* level = &nested; level->is_array(); level = &(*level)[0]) shape.push_back(level->size());
  std::vector<float> flat;
  std::function<void(const json&)> walk = [&](const json& j) {
    if (!j.is_array()) {
      flat.push_back(j.get<float>());
      return;
    }
    for (const json& e : j) walk(e);
  };
  walk(nested);
  return torch::tensor(flat).reshape(shape);
}

TEST(ConstFanInTest, FanInAfterAblation) {
  for (const json& c : Golden().at("fan_in_after_ablation")) {
    const int64_t rows = c["shape"][0], cols = c["shape"][1];
    EXPECT_EQ(ConstFanIn(rows * cols, c["sparsity"].get<double>(), rows - c["ablated"].get<int64_t>()),
              c["fan_in"].get<int64_t>())
        << c.dump();
  }
}

TEST(ConstFanInTest, CosineDropFraction) {
  for (const json& c : Golden().at("cosine_annealing")) {
    const double want = c["drop_fraction"];
    const double got = ScheduleValue(SriglDropFraction(c["alpha"], c["T_end"]), c["step"]);
    EXPECT_NEAR(got, want, 1e-12 * std::max(1e-3, want)) << c.dump();
  }
}

TEST(ConstFanInTest, SchedulerCounters) {
  const json s = Golden().at("schedule");
  const int64_t freq = s["delta"], n = s["grad_accumulation_n"], t_end = s["T_end"];
  std::vector<int64_t> updates, accumulates;
  for (int64_t k = 1; k <= 400; ++k) {
    if (SriglUpdatesAt(k, freq, t_end)) updates.push_back(k);
    if (SriglAccumulatesAt(k, freq, n, t_end)) accumulates.push_back(k);
  }
  EXPECT_EQ(updates, s["rigl_step_at_scheduler_step"].get<std::vector<int64_t>>());
  EXPECT_EQ(accumulates, s["hook_accumulates_before_call_k_(k=1..400)"].get<std::vector<int64_t>>());
}

class ConstFanInUpdateTest : public testing::TestWithParam<std::string> {};

TEST_P(ConstFanInUpdateTest, MatchesTheAuthors) {
  const json c = Golden().at("rigl_steps").at(GetParam());
  const auto no_ablation = c["no_ablation_module_names"].get<std::vector<std::string>>();
  for (size_t l = 0; l < c["names"].size(); ++l) {
    const std::string name = c["names"][l];
    SCOPED_TRACE(GetParam() + " " + name);
    ConstFanInUpdate u;
    u.sparsity = c["sparsity"][l];
    u.drop_fraction = ScheduleValue(SriglDropFraction(c["alpha"], c["T_end"]), c["step"]);
    EXPECT_NEAR(u.drop_fraction, c["drop_fraction"].get<double>(), 1e-12);
    u.ablation = c["dynamic_ablation"].get<bool>() &&
                 std::find(no_ablation.begin(), no_ablation.end(), name) == no_ablation.end();
    u.min_salient_weights_per_neuron = c["min_salient_weights_per_neuron"];
    const torch::Tensor w = ToTensor(c["weights_before"][l]);
    const torch::Tensor mask = ToTensor(c["masks_before"][l]);
    const torch::Tensor out = ConstFanInDropAndGrow(w, mask, ToTensor(c["dense_grads"][l]), u);
    const torch::Tensor want = ToTensor(c["masks_after"][l]);
    EXPECT_TRUE(torch::equal(out, want)) << "got\n" << out << "\nwant\n" << want;
    // Fan-in per row and the ablated (all-zero) rows.
    const torch::Tensor fan_in = out.sum(1).to(torch::kLong);
    EXPECT_TRUE(torch::equal(fan_in, torch::tensor(c["fan_in_after"][l].get<std::vector<int64_t>>())));
    for (int64_t r : c["ablated_neurons"][l].get<std::vector<int64_t>>())
      EXPECT_EQ(fan_in[r].item<int64_t>(), 0);
    // Weights: kept ones unchanged, newly grown ones 0, the rest pruned.
    const torch::Tensor weights = w.masked_fill(out.gt(0) & mask.eq(0), 0.0) * out;
    EXPECT_TRUE(torch::equal(weights, ToTensor(c["weights_after"][l])));
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, ConstFanInUpdateTest,
                         testing::Values("generic_step100", "ablate_neuron3_step100",
                                         "overfull_neuron5_step100"));

TEST(ConstFanInTest, InitialMaskHasTheAuthorsFanIn) {
  // 3072 columns at 90%: cols - int(cols * 0.9) = 308 per row (the first update then truncates to
  // int(numel * 0.1) // rows = 307).
  const torch::Tensor mask = InitialConstFanInMask(torch::randn({6, 3072}), 0.9, 7);
  EXPECT_TRUE(torch::equal(mask.sum(1), torch::full({6}, 308.0f)));
  EXPECT_EQ(ConstFanIn(768 * 3072, 0.9, 768), 307);
}

}  // namespace
}  // namespace dynamic
}  // namespace nmsparse
