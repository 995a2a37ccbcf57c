// nmsparse's TPE sampler (server/search/tpe_sampler.h, the library nmserver's proposer calls) behind a pipe,
// so that bench/tpe_vs_optuna/tpe_vs_optuna.py can drive it beside Optuna on the same objectives.
//
//   tpe_propose --axis=x1:-5:10 --axis=lr:1e-4:0.1:log --axis=k:1:8:int --axis=c:choices:a,b,c
//               [--n_startup=3] [--gamma=0.25] [--n_candidates=24]
// Each request on stdin is a line `SEED INDEX N` and N result lines `METRIC VALUE...` (axis order, run
// order); the answer is one line of the proposal's value texts. Mode max. A bad request ends with exit 2.
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/search/tpe_sampler.h"

namespace {

using nmsparse::server::TpeResult;
using nmsparse::server::TpeSampler;
using nmsparse::v1::RandomAxis;

bool ParseAxis(const std::string& text, RandomAxis* axis) {
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.size() < 3) return false;
  axis->set_key(parts[0]);
  if (parts[1] == "choices") {
    for (absl::string_view c : absl::StrSplit(parts[2], ',')) axis->add_choices(std::string(c));
    return true;
  }
  double lo = 0, hi = 0;
  if (!absl::SimpleAtod(parts[1], &lo) || !absl::SimpleAtod(parts[2], &hi)) return false;
  axis->set_min(lo);
  axis->set_max(hi);
  if (parts.size() > 3) {
    axis->set_log(parts[3] == "log");
    axis->set_integer(parts[3] == "int");
  }
  return true;
}

int Fail(const std::string& why) {
  std::cerr << "tpe_propose: " << why << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<RandomAxis> axes;
  nmsparse::v1::Search search;
  search.set_algorithm("tpe");
  search.set_mode("max");
  search.set_n_startup(3);
  search.set_gamma(0.25);
  search.set_n_candidates(24);
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::string> kv = absl::StrSplit(std::string(argv[i]), absl::MaxSplits('=', 1));
    uint32_t n = 0;
    double g = 0;
    if (kv.size() != 2) return Fail(std::string("bad flag ") + argv[i]);
    if (kv[0] == "--axis") {
      if (!ParseAxis(kv[1], &axes.emplace_back())) return Fail("bad axis " + kv[1]);
    } else if (kv[0] == "--n_startup" && absl::SimpleAtoi(kv[1], &n)) {
      search.set_n_startup(n);
    } else if (kv[0] == "--n_candidates" && absl::SimpleAtoi(kv[1], &n)) {
      search.set_n_candidates(n);
    } else if (kv[0] == "--gamma" && absl::SimpleAtod(kv[1], &g)) {
      search.set_gamma(g);
    } else {
      return Fail(std::string("bad flag ") + argv[i]);
    }
  }
  uint64_t seed = 0, index = 0;
  size_t n = 0;
  while (std::cin >> seed >> index >> n) {
    search.set_seed(seed);
    const TpeSampler sampler(axes, search);
    std::vector<TpeResult> results(n);
    for (TpeResult& r : results) {
      std::cin >> r.metric;
      r.values.resize(axes.size());
      for (std::string& v : r.values) std::cin >> v;
    }
    if (!std::cin) return Fail("truncated request");
    absl::StatusOr<std::vector<std::string>> x = sampler.Propose(index, results);
    if (!x.ok()) return Fail(std::string(x.status().message()));
    std::cout << absl::StrJoin(*x, " ") << std::endl;
  }
  return 0;
}
