// One cuSPARSELt 2:4 GEMM of a fixed shape and dtype, set up once: descriptors, plan, the algorithm found by
// cusparseLtMatmulSearch, the workspace that algorithm needs and the compressed-operand buffers. Run() then
// only compresses and multiplies on the current stream: no set-up, no host synchronisation, no allocation
// besides the output (from the caching allocator). CUDA builds with cuSPARSELt only
// (NMSPARSE_WITH_CUSPARSELT).
//
// All operands are row-major torch tensors: out = A[r, k] @ B[c, k]^T (+ bias[r] per row of out) with A
// exactly 2:4 along k; out is [r, c], or [c, r] when `out_transposed` (written column-major, so no transpose
// copy).
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_CUSPARSELT_PLAN_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_CUSPARSELT_PLAN_H_

#ifdef NMSPARSE_WITH_CUSPARSELT

#include <cusparseLt.h>
#include <torch/types.h>

#include <cstddef>
#include <memory>
#include <string>

#include "worker/sparsity/semi_structured/cusparselt_shape.h"

namespace nmsparse {

// cuSPARSELt's library handle, destroyed (cusparseLtDestroy) with its owner, after the plans made on it.
struct CusparseLtHandleDeleter {
  void operator()(cusparseLtHandle_t* handle) const;
};
using CusparseLtHandlePtr = std::unique_ptr<cusparseLtHandle_t, CusparseLtHandleDeleter>;
CusparseLtHandlePtr MakeCusparseLtHandle();

class CusparseLtPlan {
 public:
  // Throws c10::Error naming the cuSPARSELt call when the shape or dtype is not supported (the caller then
  // runs masked dense). Runs the algorithm search on `device`'s current stream (synchronises; set-up only).
  // `handle` must outlive the plan.
  CusparseLtPlan(const cusparseLtHandle_t* handle, const CusparseLtShape& shape, const torch::Device& device);
  ~CusparseLtPlan();
  CusparseLtPlan(const CusparseLtPlan&) = delete;
  CusparseLtPlan& operator=(const CusparseLtPlan&) = delete;

  // a: [r, k] contiguous, exactly 2:4 along k; b: [c, k] contiguous; both of the plan's dtype and device.
  // `bias` ([r], any floating dtype) is required exactly when the plan fuses one (shape().bias).
  torch::Tensor Run(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& bias = {});

  const CusparseLtShape& shape() const { return shape_; }
  // The algorithm the search chose, for logs and benchmarks: "alg 3, split-k 2, workspace 1.50 MiB".
  std::string Describe() const;
  size_t workspace_bytes() const { return workspace_bytes_; }

 private:
  void InitPlan();
  void AllocateBuffers(const torch::Device& device);
  void Compress(const torch::Tensor& a, cudaStream_t stream);
  void Matmul(const void* b, void* out, cudaStream_t stream, bool search);
  void Release();

  const cusparseLtHandle_t* handle_;
  CusparseLtShape shape_;
  cusparseLtMatDescriptor_t a_desc_, b_desc_, out_desc_;
  cusparseLtMatmulDescriptor_t matmul_;
  cusparseLtMatmulAlgSelection_t alg_;
  cusparseLtMatmulPlan_t plan_;
  int initialised_ = 0;  // How many of the objects above exist, in declaration order (for Release).
  bool plan_made_ = false;
  size_t workspace_bytes_ = 0;
  torch::Tensor compressed_;        // The compressed A, rewritten by every Run.
  torch::Tensor compress_scratch_;  // cuSPARSELt's temporary buffer for compression.
  torch::Tensor workspace_;         // Sized for the algorithm the search chose.
  torch::Tensor bias_;  // The fused bias: its address is in the plan, so every Run copies into it.
};

}  // namespace nmsparse

#endif  // NMSPARSE_WITH_CUSPARSELT
#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_CUSPARSELT_PLAN_H_
