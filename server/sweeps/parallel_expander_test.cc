#include "server/sweeps/parallel_expander.h"

#include "gtest/gtest.h"
#include "schemas/sweep.h"
#include "server/sweeps/schemas_expander.h"

namespace nmsparse::server {
namespace {

v1::SweepSpec Sweep(const std::string& grid) {
  auto s = ParseSweepYaml(std::string(R"(name: p
base:
  model: {name: vit_micro_patch4_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 1}
  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
)") + grid,
                          "p.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : v1::SweepSpec();
}

TEST(ParallelExpanderTest, SameRunsInTheSameOrderAsSerial) {
  v1::SweepSpec spec = Sweep("grid:\n  seed: [1, 2, 3, 4, 5, 6, 7]\n  sparsity.m_sparsity: [4, 8, 16]\n");
  auto serial = ExpandWithSchemas(spec);
  auto parallel = ParallelExpander(ExpandWithSchemas, 3, /*min_runs=*/1)(spec);
  ASSERT_TRUE(serial.ok()) << serial.status();
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  ASSERT_EQ(parallel->size(), 21u);
  ASSERT_EQ(parallel->size(), serial->size());
  for (size_t i = 0; i < serial->size(); ++i) {
    EXPECT_EQ((*parallel)[i].index, i);
    EXPECT_EQ((*parallel)[i].labels, (*serial)[i].labels) << i;
    EXPECT_EQ((*parallel)[i].content_hash, (*serial)[i].content_hash) << i;
    EXPECT_EQ((*parallel)[i].resolved_spec, (*serial)[i].resolved_spec) << i;
  }
}

TEST(ParallelExpanderTest, ErrorNamesTheRunAsTheSerialExpansionDoes) {
  v1::SweepSpec spec = Sweep("grid:\n  seed: [1, 2, 3, 4]\n  sparsity.n_sparsity: [2, 8]\n");
  auto serial = ExpandWithSchemas(spec);
  auto parallel = ParallelExpander(ExpandWithSchemas, 2, /*min_runs=*/1)(spec);
  ASSERT_FALSE(serial.ok());
  ASSERT_FALSE(parallel.ok());
  EXPECT_EQ(parallel.status(), serial.status());
}

}  // namespace
}  // namespace nmsparse::server
