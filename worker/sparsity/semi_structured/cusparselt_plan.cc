#include "worker/sparsity/semi_structured/cusparselt_plan.h"

#ifdef NMSPARSE_WITH_CUSPARSELT

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <tuple>

namespace nmsparse {
namespace {

#define NMSPARSE_CUSPARSELT_CHECK(call)                                                                     \
  do {                                                                                                      \
    const cusparseStatus_t status_ = (call);                                                                \
    TORCH_CHECK(status_ == CUSPARSE_STATUS_SUCCESS, #call, " failed: ", cusparseLtGetErrorString(status_)); \
  } while (0)

constexpr uint32_t kAlignment = 16;  // Bytes; the caching allocator's blocks are 512-byte aligned.

cudaDataType CudaType(torch::ScalarType dtype) {
  TORCH_CHECK(dtype == torch::kBFloat16 || dtype == torch::kHalf, "cuSPARSELt 2:4 GEMM: dtype ", dtype,
              " is not bf16 or fp16");
  return dtype == torch::kBFloat16 ? CUDA_R_16BF : CUDA_R_16F;
}

// No host allocation: the output's sizes live on the stack.
std::array<int64_t, 2> OutSize(const CusparseLtShape& s) {
  return s.out_transposed ? std::array<int64_t, 2>{s.c, s.r} : std::array<int64_t, 2>{s.r, s.c};
}

}  // namespace

const cusparseLtHandle_t* CusparseLtHandle() {
  static std::mutex mutex;
  static auto* handles = new std::map<int, cusparseLtHandle_t*>;  // Never destroyed: used until exit.
  const int device = c10::cuda::current_device();
  std::lock_guard<std::mutex> lock(mutex);
  cusparseLtHandle_t*& handle = (*handles)[device];
  if (handle == nullptr) {
    auto* fresh = new cusparseLtHandle_t;
    NMSPARSE_CUSPARSELT_CHECK(cusparseLtInit(fresh));
    handle = fresh;
  }
  return handle;
}

CusparseLtPlan::CusparseLtPlan(const cusparseLtHandle_t* handle, const CusparseLtShape& shape,
                               const torch::Device& device)
    : handle_(handle), shape_(shape) {
  const c10::cuda::CUDAGuard guard(device);
  const cudaDataType type = CudaType(shape.dtype);
  const auto [r, c, k] = std::tuple(shape.r, shape.c, shape.k);
  // A [r, k] row-major, 2:4 along k; B [c, k] row-major, used transposed; out [r, c] row-major, or
  // column-major (= [c, r] row-major) when out_transposed.
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtStructuredDescriptorInit(
      handle_, &a_desc_, r, k, k, kAlignment, type, CUSPARSE_ORDER_ROW, CUSPARSELT_SPARSITY_50_PERCENT));
  NMSPARSE_CUSPARSELT_CHECK(
      cusparseLtDenseDescriptorInit(handle_, &b_desc_, c, k, k, kAlignment, type, CUSPARSE_ORDER_ROW));
  NMSPARSE_CUSPARSELT_CHECK(
      cusparseLtDenseDescriptorInit(handle_, &out_desc_, r, c, shape.out_transposed ? r : c, kAlignment, type,
                                    shape.out_transposed ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW));
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtMatmulDescriptorInit(
      handle_, &matmul_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, &a_desc_, &b_desc_,
      &out_desc_, &out_desc_, CUSPARSE_COMPUTE_32F));
  NMSPARSE_CUSPARSELT_CHECK(
      cusparseLtMatmulAlgSelectionInit(handle_, &alg_, &matmul_, CUSPARSELT_MATMUL_ALG_DEFAULT));
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtMatmulPlanInit(handle_, &plan_, &matmul_, &alg_));

  size_t workspace = 0, compressed = 0, scratch = 0;
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtMatmulGetWorkspace(handle_, &plan_, &workspace));
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtSpMMACompressedSize(handle_, &plan_, &compressed, &scratch));
  const auto bytes = torch::TensorOptions().dtype(torch::kUInt8).device(device);
  workspace_ = torch::empty({static_cast<int64_t>(std::max<size_t>(workspace, 1))}, bytes);
  compressed_ = torch::empty({static_cast<int64_t>(compressed)}, bytes);
  compress_scratch_ = torch::empty({static_cast<int64_t>(std::max<size_t>(scratch, 1))}, bytes);

  // Search the algorithm once, on operands of the plan's shape (their values do not matter for timing).
  const auto values = torch::TensorOptions().dtype(shape.dtype).device(device);
  const torch::Tensor a = torch::zeros({r, k}, values), b = torch::zeros({c, k}, values);
  const torch::Tensor out = torch::empty(OutSize(shape), values);
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  Compress(a, stream);
  Matmul(b.data_ptr(), out.data_ptr(), stream, /*search=*/true);
}

CusparseLtPlan::~CusparseLtPlan() {
  // Destruction at exit must not throw: statuses are ignored here.
  cusparseLtMatmulPlanDestroy(&plan_);
  cusparseLtMatmulAlgSelectionDestroy(&alg_);
  cusparseLtMatDescriptorDestroy(&out_desc_);
  cusparseLtMatDescriptorDestroy(&b_desc_);
  cusparseLtMatDescriptorDestroy(&a_desc_);
}

void CusparseLtPlan::Compress(const torch::Tensor& a, cudaStream_t stream) {
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtSpMMACompress(handle_, &plan_, a.data_ptr(), compressed_.data_ptr(),
                                                    compress_scratch_.data_ptr(), stream));
}

void CusparseLtPlan::Matmul(const void* b, void* out, cudaStream_t stream, bool search) {
  const float alpha = 1.f, beta = 0.f;
  if (search) {
    NMSPARSE_CUSPARSELT_CHECK(cusparseLtMatmulSearch(handle_, &plan_, &alpha, compressed_.data_ptr(), b,
                                                     &beta, out, out, workspace_.data_ptr(), &stream, 1));
  } else {
    NMSPARSE_CUSPARSELT_CHECK(cusparseLtMatmul(handle_, &plan_, &alpha, compressed_.data_ptr(), b, &beta, out,
                                               out, workspace_.data_ptr(), &stream, 1));
  }
}

torch::Tensor CusparseLtPlan::Run(const torch::Tensor& a, const torch::Tensor& b) {
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && a.scalar_type() == shape_.dtype &&
                  b.scalar_type() == shape_.dtype && a.size(0) == shape_.r && a.size(1) == shape_.k &&
                  b.size(0) == shape_.c && b.size(1) == shape_.k,
              "CusparseLtPlan::Run: operands ", a.sizes(), " ", b.sizes(), " do not fit the plan");
  const torch::Tensor out = torch::empty(OutSize(shape_), b.options());
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(a.device().index()).stream();
  Compress(a, stream);
  Matmul(b.data_ptr(), out.data_ptr(), stream, /*search=*/false);
  return out;
}

}  // namespace nmsparse

#endif  // NMSPARSE_WITH_CUSPARSELT
