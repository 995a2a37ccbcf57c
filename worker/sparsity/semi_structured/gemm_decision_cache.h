// Measured dense vs 2:4 GEMM timings per GPU model and GEMM shape, persisted to a file so that later runs on
// the same kind of GPU skip the start-up timing, and the rule that turns a timing into a decision
// ("never slower than dense": the 2:4 kernel only where it wins by a margin). Plain C++ (no LibTorch).
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_GEMM_DECISION_CACHE_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_GEMM_DECISION_CACHE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "schemas/semi_structured_config.h"

namespace nmsparse {

// One GEMM as timed: Y[m, n] = X[m, k] @ W^T, `op` naming what is sparse ("weight", "activation", ...).
struct GemmKey {
  std::string gpu;    // Device name, e.g. "NVIDIA H100 80GB HBM3".
  std::string dtype;  // "bf16", "fp16".
  std::string op;
  int64_t m = 0, k = 0, n = 0;

  friend bool operator<(const GemmKey& a, const GemmKey& b) {
    return std::tie(a.gpu, a.dtype, a.op, a.m, a.k, a.n) < std::tie(b.gpu, b.dtype, b.op, b.m, b.k, b.n);
  }
};

// GPU time per call (CUDA events over many iterations), milliseconds.
struct GemmTiming {
  double dense_ms = 0;
  double sparse_ms = 0;
  double speedup() const { return sparse_ms > 0 ? dense_ms / sparse_ms : 0; }
};

struct GemmDecision {
  bool sparse = false;
  double speedup = 0;  // dense / 2:4 time; 0 when not timed.
  std::string reason;  // Why, for the metric lines: "force", "2:4 1.28x >= 1.05x", ...
};

// force: sparse; off: dense; auto: sparse iff timed and dense_ms >= (1 + margin) * sparse_ms.
GemmDecision DecideGemm(Accelerate accelerate, const std::optional<GemmTiming>& timing, double margin);

class GemmDecisionCache {
 public:
  // Reads `path` (a missing file is an empty cache). A malformed line is InvalidArgument "PATH:LINE: ...".
  static absl::StatusOr<GemmDecisionCache> Load(const std::string& path);
  // An empty cache that Save() writes to `path` (e.g. replacing a file Load refused).
  static GemmDecisionCache Empty(const std::string& path) { return GemmDecisionCache(path); }

  // `configured` when set, else $NMSPARSE_CACHE_DIR/semi_structured_timings.tsv, else
  // $HOME/.cache/nmsparse/semi_structured_timings.tsv.
  static std::string DefaultPath(const std::string& configured);

  std::optional<GemmTiming> Find(const GemmKey& key) const;
  void Put(const GemmKey& key, const GemmTiming& timing) { entries_[key] = timing; }
  size_t size() const { return entries_.size(); }

  // Writes every entry (through a temporary file and a rename, so a concurrent reader never sees half a
  // file), creating the directory. The error names the path.
  absl::Status Save() const;

 private:
  explicit GemmDecisionCache(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::map<GemmKey, GemmTiming> entries_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_GEMM_DECISION_CACHE_H_
