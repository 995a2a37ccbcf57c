// Every case of testdata/pgf/pgf_golden.json (numbers from the paper's reference code; README there) against
// the engine: masks exact, floats rtol 1e-6 with exact zeros kept, backward through autograd.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "schemas/structure_decay.h"
#include "worker/sparsity/decay.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/sparse_functions.h"

namespace nmsparse {
namespace {

using nlohmann::json;

const json& Golden() {
  static const json* golden = [] {
    // Read from the repository root (Bazel's runfiles and CMake's test working directory).
    std::ifstream in("worker/sparsity/testdata/pgf/pgf_golden.json");
    auto* parsed = new json(in.good() ? json::parse(in) : json());
    return parsed;
  }();
  return *golden;
}

std::vector<json> CasesOfKind(const std::string& kind) {
  std::vector<json> cases;
  for (const json& c : Golden().at("cases")) {
    if (c.at("kind") == kind) cases.push_back(c);
  }
  return cases;
}

// Values are exact float32 numbers printed as doubles: parse as double, cast to float.
torch::Tensor ToTensor(const json& t) {
  std::vector<int64_t> shape = t.at("shape").get<std::vector<int64_t>>();
  std::vector<float> values;
  for (const json& v : t.at("values")) values.push_back(static_cast<float>(v.get<double>()));
  return torch::tensor(values, torch::kFloat).reshape(shape);
}

void ExpectExact(const torch::Tensor& actual, const torch::Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(torch::equal(actual.to(torch::kFloat), expected))
      << what << ": " << actual.ne(expected).sum().item<int64_t>() << " entries differ";
}

// rtol 1e-6; an expected exact zero must come out as exactly zero.
void ExpectClose(const torch::Tensor& actual, const torch::Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const auto a = actual.contiguous().to(torch::kDouble);
  const auto e = expected.contiguous().to(torch::kDouble);
  const double* pa = a.data_ptr<double>();
  const double* pe = e.data_ptr<double>();
  int64_t bad = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const bool ok = pe[i] == 0.0 ? pa[i] == 0.0 : std::fabs(pa[i] - pe[i]) <= 1e-6 * std::fabs(pe[i]);
    if (!ok && ++bad <= 3) ADD_FAILURE() << what << " [" << i << "]: got " << pa[i] << ", want " << pe[i];
  }
  EXPECT_EQ(bad, 0) << what;
}

// A layer rule with one block for the case's N:M and layout.
LayerRule RuleFor(const json& params) {
  LayerRule rule;
  rule.is_conv = params.at("isconv").get<bool>();
  rule.sparse_dim = params.at("sparse_dim") == "col" ? SparseDim::kCol : SparseDim::kRow;
  rule.blocks = {BlockRule{true, NM{params.at("N").get<int>(), params.at("M").get<int>()}}};
  const double rate = params.value("sparsity_rate", 0.0);
  if (rate > 0) {
    rule.unstructured = true;
    rule.prune_rate = rate;
  }
  return rule;
}

class GoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Golden().is_null()) << "pgf_golden.json not found: set NMSPARSE_SHARED or put shared/ "
                                        "beside the repository";
  }
};

TEST_F(GoldenTest, FileHoldsEveryKind) {
  EXPECT_EQ(Golden().at("cases").size(), Golden().at("num_cases").get<size_t>());
  for (const char* kind : {"mask", "srste_backward", "ste_backward", "linear_decay_forward",
                           "exp_decay_forward", "sdgf_schedule"}) {
    EXPECT_FALSE(CasesOfKind(kind).empty()) << kind;
  }
}

TEST_F(GoldenTest, Masks) {
  for (const json& c : CasesOfKind("mask")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    const json& p = c.at("params");
    const torch::Tensor w = ToTensor(c.at("input"));
    const torch::Tensor expected = ToTensor(c.at("expected"));
    const LayerRule rule = RuleFor(p);
    ExpectExact(LayerMask(w, rule, 0.f), expected, "LayerMask");
    if (rule.unstructured) {
      ExpectExact(UnstructuredMask(w, rule.prune_rate), expected, "UnstructuredMask");
      EXPECT_EQ(UnstructuredKeepCount(w.numel(), rule.prune_rate), p.at("effective_N").get<int64_t>());
    } else {
      ExpectExact(NMMask(w, rule.blocks[0].nm, rule.sparse_dim, rule.is_conv), expected, "NMMask");
    }
  }
}

// Runs W~ = ApplyLayerRule(W) and backward with grad_output; returns {W~, dL/dW}.
std::pair<torch::Tensor, torch::Tensor> ForwardBackward(const json& c, const LayerRule& rule) {
  torch::Tensor w = ToTensor(c.at("input")).requires_grad_(true);
  torch::Tensor out = ApplyLayerRule(w, &rule);
  out.backward(ToTensor(c.at("grad_output")));
  return {out.detach(), w.grad()};
}

TEST_F(GoldenTest, SrsteBackward) {
  for (const json& c : CasesOfKind("srste_backward")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    LayerRule rule = RuleFor(c.at("params"));
    rule.recipe = Recipe::kSrste;
    rule.srste_lambda = c.at("params").at("srste_lambda").get<double>();
    auto [out, grad] = ForwardBackward(c, rule);
    ExpectClose(grad, ToTensor(c.at("expected")), "weight grad");
    ExpectClose(out, ToTensor(c.at("expected_extra").at("forward_output")), "forward");
    ExpectExact(LayerMask(ToTensor(c.at("input")), rule, 0.f), ToTensor(c.at("expected_extra").at("mask")),
                "mask");
  }
}

TEST_F(GoldenTest, SteBackward) {
  for (const json& c : CasesOfKind("ste_backward")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    LayerRule rule = RuleFor(c.at("params"));
    rule.recipe = Recipe::kDecay;
    rule.decay = static_cast<float>(DecayValue(DecayType::kStep, 2e-4, 0));
    auto [out, grad] = ForwardBackward(c, rule);
    ExpectClose(grad, ToTensor(c.at("expected")), "weight grad");
    if (c.contains("expected_extra") && c.at("expected_extra").contains("forward_output")) {
      ExpectClose(out, ToTensor(c.at("expected_extra").at("forward_output")), "forward");
    }
  }
}

void CheckDecayForward(const std::string& kind, DecayType type) {
  const std::vector<json> cases = CasesOfKind(kind);
  EXPECT_FALSE(cases.empty());
  for (const json& c : cases) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    const json& p = c.at("params");
    LayerRule rule = RuleFor(p);
    rule.recipe = Recipe::kDecay;
    rule.decay =
        static_cast<float>(DecayValue(type, p.at("decay_coef").get<double>(), p.at("step").get<double>()));
    EXPECT_EQ(rule.decay, static_cast<float>(p.at("decay_value").get<double>()));
    auto [out, grad] = ForwardBackward(c, rule);
    ExpectClose(out, ToTensor(c.at("expected")), "forward");
    ExpectClose(grad, ToTensor(c.at("expected_extra").at("weight_grad")), "weight grad");
    ExpectExact(LayerMask(ToTensor(c.at("input")), rule, 0.f), ToTensor(c.at("expected_extra").at("mask")),
                "mask");
  }
}

TEST_F(GoldenTest, LinearDecayForward) { CheckDecayForward("linear_decay_forward", DecayType::kLinear); }
TEST_F(GoldenTest, ExpDecayForward) { CheckDecayForward("exp_decay_forward", DecayType::kExp); }

// The SDGF stage table (schemas/structure_decay, used by the engine) against the reference's
// get_decay_config: epoch -> "N:M", exactly.
TEST_F(GoldenTest, StructureDecaySchedules) {
  for (const json& c : CasesOfKind("sdgf_schedule")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    const json& p = c.at("params");
    const int total = p.at("total_epochs").get<int>();
    SparsityConfig config;
    config.sparsity_type = SparsityType::kStructuredNM;
    config.structure_decay_flag = true;
    const std::string type = p.at("structure_decay_type").get<std::string>();
    if (type != "sparsify" && type != "fine") {
      std::cout << "[  SKIPPED ] " << c.at("id").get<std::string>() << ": structure_decay_type " << type
                << "\n";
      continue;
    }
    config.structure_decay_type = type == "fine" ? StructureDecayType::kFine : StructureDecayType::kSparsify;
    // Fractions whose int(fraction * T) is exactly the case's epoch counts.
    config.dense_fraction = (p.at("dense_epochs").get<int>() + 0.5) / total;
    config.fine_tune_fraction = (p.at("fine_tune_epochs").get<int>() + 0.5) / total;
    ASSERT_EQ(DenseEpochs(config, total), p.at("dense_epochs").get<int>());
    ASSERT_EQ(FineTuneEpochs(config, total), p.at("fine_tune_epochs").get<int>());
    const NM target{p.at("N").get<int>(), p.at("M").get<int>()};
    std::map<int, std::string> actual;
    for (const auto& [epoch, nm] : StructureDecayStages(config, total, target)) {
      actual[epoch] = std::to_string(nm.n) + ":" + std::to_string(nm.m);
    }
    std::map<int, std::string> expected;
    for (const auto& [epoch, nm] : c.at("expected").items())
      expected[std::stoi(epoch)] = nm.get<std::string>();
    EXPECT_EQ(actual, expected);
    for (int epoch = p.at("dense_epochs").get<int>(); epoch < total; ++epoch) {
      auto it = expected.upper_bound(epoch);
      ASSERT_NE(it, expected.begin());
      const NM nm = StageAtEpoch(config, total, target, epoch);
      EXPECT_EQ(std::to_string(nm.n) + ":" + std::to_string(nm.m), std::prev(it)->second)
          << "epoch " << epoch;
    }
  }
}

}  // namespace
}  // namespace nmsparse
