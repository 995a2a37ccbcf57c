// One cuSPARSELt 2:4 GEMM of a fixed shape and dtype, set up once: descriptors, plan, the algorithm found by
// cusparseLtMatmulSearch, the workspace and the compressed-operand buffers. Run() then only compresses and
// multiplies on the current stream: no set-up, no host synchronisation, no allocation besides the output
// (from the caching allocator). CUDA builds with cuSPARSELt only (NMSPARSE_WITH_CUSPARSELT).
//
// All operands are row-major torch tensors: out = A[r, k] @ B[c, k]^T with A exactly 2:4 along k; out is
// [r, c], or [c, r] when `out_transposed` (written column-major, so no transpose copy is needed).
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_CUSPARSELT_PLAN_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_CUSPARSELT_PLAN_H_

#ifdef NMSPARSE_WITH_CUSPARSELT

#include <cusparseLt.h>
#include <torch/types.h>

#include <cstdint>

namespace nmsparse {

struct CusparseLtShape {
  int64_t r = 0, c = 0, k = 0;
  torch::ScalarType dtype = torch::kBFloat16;  // bf16 or fp16.
  bool out_transposed = false;
};

class CusparseLtPlan {
 public:
  // Throws c10::Error naming the cuSPARSELt call when the shape or dtype is not supported (the caller then
  // runs masked dense). Runs the algorithm search on `device`'s current stream (synchronises; set-up only).
  CusparseLtPlan(const cusparseLtHandle_t* handle, const CusparseLtShape& shape, const torch::Device& device);
  ~CusparseLtPlan();
  CusparseLtPlan(const CusparseLtPlan&) = delete;
  CusparseLtPlan& operator=(const CusparseLtPlan&) = delete;

  // a: [r, k] contiguous, exactly 2:4 along k; b: [c, k] contiguous; both of the plan's dtype and device.
  torch::Tensor Run(const torch::Tensor& a, const torch::Tensor& b);

  const CusparseLtShape& shape() const { return shape_; }

 private:
  void Compress(const torch::Tensor& a, cudaStream_t stream);
  void Matmul(const void* b, void* out, cudaStream_t stream, bool search);

  const cusparseLtHandle_t* handle_;
  CusparseLtShape shape_;
  cusparseLtMatDescriptor_t a_desc_, b_desc_, out_desc_;
  cusparseLtMatmulDescriptor_t matmul_;
  cusparseLtMatmulAlgSelection_t alg_;
  cusparseLtMatmulPlan_t plan_;
  torch::Tensor compressed_;        // The compressed A, rewritten by every Run.
  torch::Tensor compress_scratch_;  // cuSPARSELt's temporary buffer for compression.
  torch::Tensor workspace_;
};

// The process's cuSPARSELt handle for the current CUDA device (made on first use, kept for the run).
const cusparseLtHandle_t* CusparseLtHandle();

}  // namespace nmsparse

#endif  // NMSPARSE_WITH_CUSPARSELT
#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_CUSPARSELT_PLAN_H_
