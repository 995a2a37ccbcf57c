// The shape of one cuSPARSELt plan, and which plans a semi-structured linear's GEMMs need: the keys of the
// plan cache. No cuSPARSELt here, so that every build tests the mapping (semi_structured_linear_test).
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_CUSPARSELT_SHAPE_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_CUSPARSELT_SHAPE_H_

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "schemas/semi_structured_config.h"

namespace nmsparse {

// out = A[r, k] @ B[c, k]^T (+ bias[r] per row), A exactly 2:4 along k; out [r, c] row-major, or written
// column-major (= [c, r] row-major) when out_transposed.
struct CusparseLtShape {
  int64_t r = 0, c = 0, k = 0;
  c10::ScalarType dtype = c10::ScalarType::BFloat16;  // bf16 or fp16, fp32 accumulation.
  bool out_transposed = false;
  bool bias = false;  // Fused through CUSPARSELT_MATMUL_BIAS_POINTER.

  auto Tie() const { return std::tie(r, c, k, dtype, out_transposed, bias); }
  friend bool operator<(const CusparseLtShape& a, const CusparseLtShape& b) { return a.Tie() < b.Tie(); }
  friend bool operator==(const CusparseLtShape& a, const CusparseLtShape& b) { return a.Tie() == b.Tie(); }
};

// How a weight-2:4 GEMM writes its output D = W~ X^T [n, m]: column-major, which is Y = X W~^T [m, n]
// row-major with no copy; or row-major, followed by a transpose copy. Which is faster is cuSPARSELt's kernel
// choice per GPU, dtype and shape (PyTorch's column-major `transpose_result` took 260 ms per call in fp16 on
// an H100): the default is column-major, NMSPARSE_CUSPARSELT_OUTPUT=row picks the other, and
// bench/gpu/node_check.sh times both (docs/accelerated-2-4.md).
enum class OutputOrder { kColumn, kRow };

// NMSPARSE_CUSPARSELT_OUTPUT: "col" (or unset) or "row"; anything else is an error naming the variable.
OutputOrder OutputOrderFromEnv();
std::string ToString(OutputOrder order);

// One linear's GEMM as the layer sees it: Y[m, n] = X[m, k] W^T (+ bias), computed in `dtype`.
struct LinearGemm {
  SemiStructuredKind kind = SemiStructuredKind::kWeight;
  int64_t m = 0, k = 0, n = 0;
  bool bias = false;
  c10::ScalarType dtype = c10::ScalarType::BFloat16;

  auto Tie() const { return std::tie(kind, m, k, n, bias, dtype); }
  friend bool operator<(const LinearGemm& a, const LinearGemm& b) { return a.Tie() < b.Tie(); }
};

// The plans of one linear GEMM.
struct LinearPlans {
  CusparseLtShape forward;
  std::optional<CusparseLtShape>
      input_grad;  // dX = dY W~ on the kernel: weight 2:4 with a transposable mask.
};

// weight: forward D = W~[n, k] X[m, k]^T with the bias fused per row of D (one per output feature);
// transposable: also dX^T = W~^T[k, n] dY[m, n]^T (W~^T is 2:4 along n). activation: D = X24[m, k] W[n, k]^T
// is Y itself, row-major; its bias runs per column, which cuSPARSELt cannot fuse, so it is added after.
LinearPlans PlansFor(const LinearGemm& gemm, bool transposable, OutputOrder order);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_CUSPARSELT_SHAPE_H_
