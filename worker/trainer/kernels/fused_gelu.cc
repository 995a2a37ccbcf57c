#include "worker/trainer/kernels/fused_gelu.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#include "worker/trainer/kernels/avx2_math.h"
#include "worker/trainer/kernels/fused_kernels_switch.h"

namespace nmsparse {
namespace {

constexpr int64_t kGrain = 16384;  // elements per parallel task: large enough to amortise the dispatch

#ifdef NMSPARSE_X86
using avx2::Exp;
using avx2::TailMask;

// Phi(x) = (1 + erf(x / sqrt 2)) / 2 and exp(-x^2 / 2) for 8 lanes. erfc(|z|) = poly(t) exp(-z^2) with
// t = 1 / (1 + p |z|) (A&S 7.1.26); for x < 0, Phi(x) = erfc(|z|) / 2 directly, without the cancellation of
// 1 + erf(z).
struct GeluTerms {
  __m256 phi, gauss;
};

NMSPARSE_AVX2 inline GeluTerms Terms(__m256 x) {
  const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(0.70710678f));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), z, one));
  __m256 poly = _mm256_set1_ps(1.061405429f);
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(-1.453152027f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(1.421413741f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(-0.284496736f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(0.254829592f));
  poly = _mm256_mul_ps(poly, t);
  const __m256 gauss = Exp(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(z, z)));  // exp(-x^2 / 2)
  const __m256 half_erfc = _mm256_mul_ps(_mm256_set1_ps(0.5f), _mm256_mul_ps(poly, gauss));
  const __m256 negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  return {_mm256_blendv_ps(_mm256_sub_ps(one, half_erfc), half_erfc, negative), gauss};
}

NMSPARSE_AVX2 inline __m256 Forward8(__m256 x) { return _mm256_mul_ps(x, Terms(x).phi); }

NMSPARSE_AVX2 inline __m256 Backward8(__m256 x, __m256 grad) {
  const GeluTerms terms = Terms(x);  // d/dx x Phi(x) = Phi(x) + x exp(-x^2 / 2) / sqrt(2 pi)
  const __m256 density = _mm256_mul_ps(terms.gauss, _mm256_set1_ps(0.39894228f));
  return _mm256_mul_ps(grad, _mm256_fmadd_ps(x, density, terms.phi));
}

NMSPARSE_AVX2 void ForwardAvx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Forward8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i tail = TailMask(n - i);
    _mm256_maskstore_ps(y + i, tail, Forward8(_mm256_maskload_ps(x + i, tail)));
  }
}

NMSPARSE_AVX2 void BackwardAvx2(const float* x, const float* grad, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, Backward8(_mm256_loadu_ps(x + i), _mm256_loadu_ps(grad + i)));
  }
  if (i < n) {
    const __m256i tail = TailMask(n - i);
    _mm256_maskstore_ps(out + i, tail,
                        Backward8(_mm256_maskload_ps(x + i, tail), _mm256_maskload_ps(grad + i, tail)));
  }
}
#endif  // NMSPARSE_X86

torch::Tensor ForwardKernel(const torch::Tensor& x) {
  auto y = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = y.data_ptr<float>();
  at::parallel_for(0, x.numel(), kGrain, [&](int64_t begin, int64_t end) {
#ifdef NMSPARSE_X86
    ForwardAvx2(src + begin, dst + begin, end - begin);
#endif
  });
  return y;
}

torch::Tensor BackwardKernel(const torch::Tensor& x, const torch::Tensor& grad) {
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  const float* g = grad.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  at::parallel_for(0, x.numel(), kGrain, [&](int64_t begin, int64_t end) {
#ifdef NMSPARSE_X86
    BackwardAvx2(src + begin, g + begin, dst + begin, end - begin);
#endif
  });
  return out;
}

class FusedGeluFunction : public torch::autograd::Function<FusedGeluFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    ctx->save_for_backward({x});
    return ForwardKernel(x);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    return {BackwardKernel(ctx->get_saved_variables()[0], grad_outputs[0].contiguous())};
  }
};

}  // namespace

bool FusedGeluApplies(const torch::Tensor& x) {
#ifdef NMSPARSE_X86
  return FusedKernelsEnabled() && avx2::CpuHasAvx2Fma() && x.device().is_cpu() &&
         x.scalar_type() == torch::kFloat;
#else
  (void)x;
  return false;
#endif
}

torch::Tensor Gelu(const torch::Tensor& x) {
  if (!FusedGeluApplies(x)) return torch::gelu(x);
  auto input = x.contiguous();
  if (!(torch::GradMode::is_enabled() && input.requires_grad())) return ForwardKernel(input);
  return FusedGeluFunction::apply(input);
}

}  // namespace nmsparse
