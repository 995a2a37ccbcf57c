// Timing several variants of one operation on a machine that other work shares: every round runs each
// variant once, in turn, so that load that comes and goes falls on all of them alike, and the medians over
// rounds (and their ratios) compare like with like. Plus the load average, to print with every figure.
#ifndef NMSPARSE_BENCH_INTERLEAVED_H_
#define NMSPARSE_BENCH_INTERLEAVED_H_

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace nmsparse::bench {

// Median milliseconds of each of `variants` over `rounds` interleaved rounds, after `warmup` untimed ones.
// Odd rounds run the variants in reverse order, so that none always follows the same one (whose caches,
// allocations or clock it would inherit).
inline std::vector<double> InterleavedMedianMs(const std::vector<std::function<void()>>& variants, int rounds,
                                               int warmup = 2) {
  std::vector<std::vector<double>> ms(variants.size());
  for (int round = 0; round < warmup + rounds; ++round) {
    for (size_t i = 0; i < variants.size(); ++i) {
      const size_t v = round % 2 == 0 ? i : variants.size() - 1 - i;
      const auto start = std::chrono::steady_clock::now();
      variants[v]();
      const auto end = std::chrono::steady_clock::now();
      if (round >= warmup) ms[v].push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
  }
  std::vector<double> medians;
  for (auto& m : ms) {
    std::nth_element(m.begin(), m.begin() + m.size() / 2, m.end());
    medians.push_back(m[m.size() / 2]);
  }
  return medians;
}

// The first line of /proc/loadavg ("1-min 5-min 15-min running/total last-pid"), or "unknown".
inline std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string line;
  return std::getline(in, line) ? line : "unknown";
}

}  // namespace nmsparse::bench

#endif  // NMSPARSE_BENCH_INTERLEAVED_H_
