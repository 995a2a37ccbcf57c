// ExpandSweep (base parsed once, touched keys re-parsed, memoized validation, direct canonical YAML and wire
// spec) against ExpandSweepGeneric (every run's whole spec re-parsed and validated, yaml-cpp emitter,
// reflection), both in this run, on two grids: the coordinator benchmark's sweep (one axis over seed) and a
// recipe x N:M x seed grid whose runs re-parse the sparsity section. Prints ms/run and the speed-up (target
// >= 8x), and checks that both expansions agree on every content hash they share.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "bench/service/bench_sweep.h"
#include "schemas/sweep.h"
#include "schemas/testing/generic_paths.h"

ABSL_FLAG(int, runs, 10000, "runs of each grid expanded by ExpandSweep");
ABSL_FLAG(int, generic_runs, 1000, "runs of each grid expanded by ExpandSweepGeneric (about 1 ms each)");

namespace nmsparse {
namespace {

using Expander = absl::StatusOr<std::vector<ResolvedRun>> (*)(const v1::SweepSpec&);

// A grid of seeds x 4 recipes x 3 N:M (about n runs); seeds first, so that grids of different sizes begin
// with the same runs.
v1::SweepSpec RecipeSweep(int n) {
  std::string yaml = R"(base:
  model: {name: vit_micro_patch4_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 8}
  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FFQKV}
grid:
  seed: [SEEDS]
  recipe:
    dense: {sparsity.sparsity_type: DENSE}
    srste: {sparsity.sparsity_type: SRSTE}
    mdgf: {sparsity.sparsity_type: STRUCTURED_NM, sparsity.decay_type: EXP, sparsity.decay_coef: 0.02}
    sdgf: {sparsity.sparsity_type: STRUCTURED_NM, sparsity.structure_decay_flag: true}
  sparsity.m_sparsity: [4, 8, 16]
)";
  std::string seeds;
  for (int i = 0; i < std::max(1, n / 12); ++i) absl::StrAppend(&seeds, i == 0 ? "" : ", ", i);
  yaml.replace(yaml.find("SEEDS"), 5, seeds);
  auto sweep = ParseSweepYaml(yaml, "recipe_sweep.yaml");
  if (!sweep.ok()) {
    std::fprintf(stderr, "recipe sweep does not parse: %s\n", sweep.status().ToString().c_str());
    std::exit(1);
  }
  return *sweep;
}

// Expands `sweep`, returning ms per run; exits on an error.
double MsPerRun(Expander expand, const v1::SweepSpec& sweep, std::vector<ResolvedRun>* runs) {
  const auto start = std::chrono::steady_clock::now();
  auto expanded = expand(sweep);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!expanded.ok()) {
    std::fprintf(stderr, "expansion failed: %s\n", expanded.status().ToString().c_str());
    std::exit(1);
  }
  *runs = std::move(*expanded);
  return ms / static_cast<double>(runs->size());
}

// Returns false when the two expansions disagree on a run they both have.
bool Compare(const char* name, const v1::SweepSpec& fast_sweep, const v1::SweepSpec& generic_sweep) {
  std::vector<ResolvedRun> fast, generic;
  const double fast_ms = MsPerRun(&ExpandSweep, fast_sweep, &fast);
  const double generic_ms = MsPerRun(&testing::ExpandSweepGeneric, generic_sweep, &generic);
  bool same = true;
  for (size_t i = 0; i < std::min(fast.size(), generic.size()); ++i) {
    same = same && fast[i].content_hash == generic[i].content_hash &&
           fast[i].canonical_yaml == generic[i].canonical_yaml;
  }
  std::printf("%-12s ExpandSweep %6zu runs %8.4f ms/run | generic %5zu runs %7.4f ms/run | %5.1fx faster%s\n",
              name, fast.size(), fast_ms, generic.size(), generic_ms, generic_ms / fast_ms,
              same ? "" : "  MISMATCH");
  return same;
}

}  // namespace
}  // namespace nmsparse

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int runs = absl::GetFlag(FLAGS_runs), generic_runs = absl::GetFlag(FLAGS_generic_runs);
  using nmsparse::Compare;
  bool same = Compare("seed grid", nmsparse::bench::BenchSweep("bench", runs),
                      nmsparse::bench::BenchSweep("bench", generic_runs));
  same = Compare("recipe grid", nmsparse::RecipeSweep(runs), nmsparse::RecipeSweep(generic_runs)) && same;
  return same ? 0 : 1;
}
