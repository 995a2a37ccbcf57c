#include "worker/sparsity/semi_structured/cusparselt_plan.h"

#ifdef NMSPARSE_WITH_CUSPARSELT

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <tuple>

#include "absl/strings/str_format.h"

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

torch::Tensor Bytes(size_t n, const torch::Device& device) {
  return torch::empty({static_cast<int64_t>(std::max<size_t>(n, 1))},
                      torch::TensorOptions().dtype(torch::kUInt8).device(device));
}

}  // namespace

void CusparseLtHandleDeleter::operator()(cusparseLtHandle_t* handle) const {
  cusparseLtDestroy(handle);  // At exit: nothing to report to.
  delete handle;
}

CusparseLtHandlePtr MakeCusparseLtHandle() {
  auto handle = std::make_unique<cusparseLtHandle_t>();
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtInit(handle.get()));
  return CusparseLtHandlePtr(handle.release());
}

CusparseLtPlan::CusparseLtPlan(const cusparseLtHandle_t* handle, const CusparseLtShape& shape,
                               const torch::Device& device)
    : handle_(handle), shape_(shape) {
  const c10::cuda::CUDAGuard guard(device);
  try {
    const cudaDataType type = CudaType(shape.dtype);
    const auto [r, c, k] = std::tuple(shape.r, shape.c, shape.k);
    // A [r, k] row-major, 2:4 along k; B [c, k] row-major, used transposed; out [r, c] row-major, or
    // column-major (= [c, r] row-major) when out_transposed.
    NMSPARSE_CUSPARSELT_CHECK(cusparseLtStructuredDescriptorInit(
        handle_, &a_desc_, r, k, k, kAlignment, type, CUSPARSE_ORDER_ROW, CUSPARSELT_SPARSITY_50_PERCENT));
    ++initialised_;
    NMSPARSE_CUSPARSELT_CHECK(
        cusparseLtDenseDescriptorInit(handle_, &b_desc_, c, k, k, kAlignment, type, CUSPARSE_ORDER_ROW));
    ++initialised_;
    NMSPARSE_CUSPARSELT_CHECK(
        cusparseLtDenseDescriptorInit(handle_, &out_desc_, r, c, shape.out_transposed ? r : c, kAlignment,
                                      type, shape.out_transposed ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW));
    ++initialised_;
    NMSPARSE_CUSPARSELT_CHECK(cusparseLtMatmulDescriptorInit(
        handle_, &matmul_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, &a_desc_, &b_desc_,
        &out_desc_, &out_desc_, CUSPARSE_COMPUTE_32F));
    if (shape.bias) {
      // One value per row of out, of out's dtype, at a fixed address: Run copies the step's bias there.
      bias_ = torch::zeros({r}, torch::TensorOptions().dtype(shape.dtype).device(device));
      void* bias = bias_.data_ptr();
      NMSPARSE_CUSPARSELT_CHECK(cusparseLtMatmulDescSetAttribute(
          handle_, &matmul_, CUSPARSELT_MATMUL_BIAS_POINTER, &bias, sizeof(bias)));
    }
    NMSPARSE_CUSPARSELT_CHECK(
        cusparseLtMatmulAlgSelectionInit(handle_, &alg_, &matmul_, CUSPARSELT_MATMUL_ALG_DEFAULT));
    ++initialised_;
    InitPlan();
    AllocateBuffers(device);

    // Search the algorithm once, on operands of the plan's shape (their values do not matter for timing).
    const auto values = torch::TensorOptions().dtype(shape.dtype).device(device);
    const torch::Tensor a = torch::zeros({r, k}, values), b = torch::zeros({c, k}, values);
    const torch::Tensor out = torch::empty(OutSize(shape), values);
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
    Compress(a, stream);
    Matmul(b.data_ptr(), out.data_ptr(), stream, /*search=*/true);
    // The search may choose a configuration (split-K, more buffers) that needs more workspace than the
    // default algorithm's: as NVIDIA's sample and PyTorch do, make the plan again with the algorithm found
    // (the search wrote it into alg_) and size everything from that plan. The workspace asked for before the
    // search would be written past by every matmul.
    InitPlan();
    AllocateBuffers(device);
  } catch (...) {
    Release();
    throw;
  }
}

CusparseLtPlan::~CusparseLtPlan() { Release(); }

void CusparseLtPlan::InitPlan() {
  if (plan_made_) cusparseLtMatmulPlanDestroy(&plan_);
  plan_made_ = false;
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtMatmulPlanInit(handle_, &plan_, &matmul_, &alg_));
  plan_made_ = true;
}

void CusparseLtPlan::AllocateBuffers(const torch::Device& device) {
  size_t compressed = 0, scratch = 0;
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtMatmulGetWorkspace(handle_, &plan_, &workspace_bytes_));
  NMSPARSE_CUSPARSELT_CHECK(cusparseLtSpMMACompressedSize(handle_, &plan_, &compressed, &scratch));
  workspace_ = torch::Tensor();  // Back to the caching allocator before the next one is taken.
  workspace_ = Bytes(workspace_bytes_, device);
  if (!compressed_.defined() || compressed_.numel() < static_cast<int64_t>(compressed)) {
    compressed_ = Bytes(compressed, device);
  }
  if (!compress_scratch_.defined() || compress_scratch_.numel() < static_cast<int64_t>(scratch)) {
    compress_scratch_ = Bytes(scratch, device);
  }
}

void CusparseLtPlan::Release() {
  // Destruction at exit must not throw: statuses are ignored here.
  if (plan_made_) cusparseLtMatmulPlanDestroy(&plan_);
  plan_made_ = false;
  if (initialised_ >= 4) cusparseLtMatmulAlgSelectionDestroy(&alg_);
  if (initialised_ >= 3) cusparseLtMatDescriptorDestroy(&out_desc_);
  if (initialised_ >= 2) cusparseLtMatDescriptorDestroy(&b_desc_);
  if (initialised_ >= 1) cusparseLtMatDescriptorDestroy(&a_desc_);
  initialised_ = 0;
}

std::string CusparseLtPlan::Describe() const {
  int alg = -1, split_k = -1;
  cusparseLtMatmulAlgGetAttribute(handle_, &alg_, CUSPARSELT_MATMUL_ALG_CONFIG_ID, &alg, sizeof(alg));
  cusparseLtMatmulAlgGetAttribute(handle_, &alg_, CUSPARSELT_MATMUL_SPLIT_K, &split_k, sizeof(split_k));
  return absl::StrFormat("alg %d, split-k %d, workspace %.2f MiB", alg, split_k,
                         static_cast<double>(workspace_bytes_) / (1 << 20));
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

torch::Tensor CusparseLtPlan::Run(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& bias) {
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && a.scalar_type() == shape_.dtype &&
                  b.scalar_type() == shape_.dtype && a.size(0) == shape_.r && a.size(1) == shape_.k &&
                  b.size(0) == shape_.c && b.size(1) == shape_.k && bias.defined() == shape_.bias,
              "CusparseLtPlan::Run: operands ", a.sizes(), " ", b.sizes(), " do not fit the plan");
  if (shape_.bias) bias_.copy_(bias);  // Device to device, on the current stream, cast to out's dtype.
  const torch::Tensor out = torch::empty(OutSize(shape_), b.options());
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(a.device().index()).stream();
  Compress(a, stream);
  Matmul(b.data_ptr(), out.data_ptr(), stream, /*search=*/false);
  return out;
}

}  // namespace nmsparse

#endif  // NMSPARSE_WITH_CUSPARSELT
