// Times the dense and the 2:4 way of a step's GEMM work against each other so that neither side is favoured:
// both warmed, then several rounds that each time one block of calls of either side, the side that goes first
// alternating from round to round (a GPU still raising its clocks, or another process's burst, then falls on
// both alike), and each side's median block. One sample of each, dense first, at whatever clocks the GPU
// idled at, decided against a 5% margin, was not a fair comparison. Plain C++: the clock is injected.
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_INTERLEAVED_TIMING_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_INTERLEAVED_TIMING_H_

#include <functional>

#include "worker/sparsity/semi_structured/gemm_decision_cache.h"

namespace nmsparse {

enum class TimedSide { kDense, kSparse };

struct InterleavedTimingOptions {
  int warmup_blocks = 2;  // Per side, untimed, dense and sparse alternating.
  int rounds = 7;         // Timed blocks per side (odd: the median is one of them).
};

// `time_block(side)` runs one block of calls of `side` and returns its time per call (ms). Returns the
// median per-call time of each side.
GemmTiming TimeInterleaved(const std::function<double(TimedSide)>& time_block,
                           const InterleavedTimingOptions& options = {});

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_INTERLEAVED_TIMING_H_
