// The sweep the service benchmarks submit: a small valid base spec and one grid axis over `seed` with n
// values, so every run has its own content hash (nothing is reused).
#ifndef NMSPARSE_BENCH_SERVICE_BENCH_SWEEP_H_
#define NMSPARSE_BENCH_SERVICE_BENCH_SWEEP_H_

#include <string>

#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::bench {

v1::SweepSpec BenchSweep(const std::string& name, int n);

}  // namespace nmsparse::bench

#endif  // NMSPARSE_BENCH_SERVICE_BENCH_SWEEP_H_
