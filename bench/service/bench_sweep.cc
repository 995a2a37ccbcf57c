#include "bench/service/bench_sweep.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "schemas/sweep.h"

namespace nmsparse::bench {

v1::SweepSpec BenchSweep(const std::string& name, int n) {
  std::string yaml = absl::StrCat("name: ", name, R"(
base:
  model: {name: vit_micro_patch4_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 1}
  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
grid:
  seed: [)");
  for (int i = 0; i < n; ++i) absl::StrAppend(&yaml, i == 0 ? "" : ", ", i);
  absl::StrAppend(&yaml, "]\n");
  auto sweep = ParseSweepYaml(yaml, "bench_sweep.yaml");
  if (!sweep.ok()) {
    std::fprintf(stderr, "bench sweep does not parse: %s\n", sweep.status().ToString().c_str());
    std::exit(1);
  }
  return *sweep;
}

}  // namespace nmsparse::bench
