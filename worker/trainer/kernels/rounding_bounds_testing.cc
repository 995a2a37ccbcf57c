#include "worker/trainer/kernels/rounding_bounds_testing.h"

#include <torch/torch.h>

#include <cmath>

namespace nmsparse::rounding {
namespace {

// max |GELU'(x)| (at x ~ 1.41) and max |GELU''(x)| = 2 phi(0).
constexpr double kGeluSlope = 1.13;
constexpr double kGeluCurvature = 0.80;

torch::Tensor Abs64(const torch::Tensor& t) { return t.detach().to(torch::kDouble).abs(); }

// gamma(k) |a| @ |b|: the bound of one float32 product whose sums run over k terms, in any order.
torch::Tensor ProductBound(const torch::Tensor& a_abs, const torch::Tensor& b_abs, int64_t k) {
  return Gamma(k) * torch::matmul(a_abs, b_abs);
}

}  // namespace

double Gamma(int64_t n) {
  const double nu = static_cast<double>(n) * kUnitRoundoff;
  return nu / (1.0 - nu);
}

AttentionBounds AttentionErrorBounds(const torch::Tensor& qkv, int64_t heads, double scale,
                                     const torch::Tensor& grad_out) {
  const int64_t b = qkv.size(0), t = qkv.size(1), c = qkv.size(2) / 3, d = c / heads;
  auto parts = qkv.detach().to(torch::kDouble).reshape({b, t, 3, heads, d}).permute({2, 0, 3, 1, 4});
  const auto q = parts[0], k = parts[1], v = parts[2];  // [B, H, T, D]
  const auto kt = k.transpose(-2, -1);
  auto scores = scale * torch::matmul(q, kt);
  // Scores: a sum of D products, the scale, and the max subtracted before exp.
  auto score_error = scale * ProductBound(q.abs(), kt.abs(), d + 2);
  auto delta = std::get<0>(score_error.max(-1, true));
  auto p = torch::softmax(scores, -1);
  // exp, a sum of T terms and a division per probability; a score error delta moves p by a factor e^(+-2
  // delta).
  auto p_error = p * (torch::expm1(2.0 * delta) + Gamma(t + 4));
  auto out_error = ProductBound(p, v.abs(), t) + torch::matmul(p_error, v.abs());

  const auto dy = grad_out.detach().to(torch::kDouble).reshape({b, t, heads, d}).transpose(1, 2);
  const auto dy_abs = dy.abs();
  auto dv_error =
      ProductBound(p.transpose(-2, -1), dy_abs, t) + torch::matmul(p_error.transpose(-2, -1), dy_abs);
  auto dp = torch::matmul(dy, v.transpose(-2, -1));
  auto dp_error = ProductBound(dy_abs, v.abs().transpose(-2, -1), d);
  auto row_dot = (p * dp).sum(-1, true);
  auto row_dot_error =
      Gamma(t) * (p * dp.abs()).sum(-1, true) + (p_error * dp.abs() + p * dp_error).sum(-1, true);
  auto centred = (dp - row_dot).abs();
  auto ds = scale * p * (dp - row_dot);
  auto ds_error = scale * (p_error * centred + p * (dp_error + row_dot_error) + Gamma(3) * p * centred);
  auto dq_error = ProductBound(ds.abs(), k.abs(), t) + torch::matmul(ds_error, k.abs());
  auto dk_error = ProductBound(ds.abs().transpose(-2, -1), q.abs(), t) +
                  torch::matmul(ds_error.transpose(-2, -1), q.abs());

  AttentionBounds bounds;
  bounds.out = out_error.transpose(1, 2).reshape({b, t, c});
  bounds.grad = torch::stack({dq_error, dk_error, dv_error}).permute({1, 3, 0, 2, 4}).reshape({b, t, 3 * c});
  return bounds;
}

MlpBounds MlpErrorBounds(const torch::Tensor& x, const torch::Tensor& w1, const torch::Tensor& b1,
                         const torch::Tensor& w2, const torch::Tensor& b2, const torch::Tensor& grad_out,
                         double gelu_abs_error) {
  const int64_t in = x.size(-1), hidden = w1.size(0), out = w2.size(0);
  const auto x2 = x.detach().to(torch::kDouble).reshape({-1, in});
  const auto x_abs = x2.abs(), w1_abs = Abs64(w1), w2_abs = Abs64(w2);
  auto pre = torch::linear(x2, w1.detach().to(torch::kDouble), b1.detach().to(torch::kDouble));
  auto pre_error = Gamma(in + 1) * (torch::matmul(x_abs, w1_abs.t()) + Abs64(b1));
  auto h = torch::gelu(pre);
  auto h_error = kGeluSlope * pre_error + gelu_abs_error * pre.abs() + kUnitRoundoff * h.abs();
  auto out_error = Gamma(hidden + 1) * (torch::matmul(h.abs(), w2_abs.t()) + Abs64(b2)) +
                   torch::matmul(h_error, w2_abs.t());

  const auto dy_abs = Abs64(grad_out).reshape({-1, out});
  auto dh_abs = torch::matmul(dy_abs, w2_abs);  // >= |dy @ w2|
  auto dh_error = Gamma(out) * dh_abs;
  // GELU'(pre): its own error as GELU's, moved by the pre-activation's error times max |GELU''|.
  auto slope_error = kGeluCurvature * pre_error + gelu_abs_error + 4 * kUnitRoundoff;
  auto dpre_abs = kGeluSlope * dh_abs;
  auto dpre_error = kGeluSlope * dh_error + dh_abs * slope_error + kUnitRoundoff * dpre_abs;
  const int64_t rows = x2.size(0);
  auto grad_w1_error =
      Gamma(rows) * torch::matmul(dpre_abs.t(), x_abs) + torch::matmul(dpre_error.t(), x_abs);

  auto out_shape = x.sizes().vec();
  out_shape.back() = out;
  return MlpBounds{out_error.reshape(out_shape), grad_w1_error};
}

}  // namespace nmsparse::rounding
