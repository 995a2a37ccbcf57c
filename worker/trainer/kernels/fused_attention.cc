#include "worker/trainer/kernels/fused_attention.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#include <vector>

#include "worker/trainer/kernels/blas_gemm.h"
#include "worker/trainer/kernels/fused_kernels_switch.h"
#include "worker/trainer/kernels/softmax_rows.h"

namespace nmsparse {
namespace {

// Sizes of one call, with the strides of the interleaved layouts: a token's qkv row holds q, k, v for all
// heads (3 * channels floats); an output row holds every head's values (channels floats).
struct AttentionShape {
  int64_t batch, tokens, heads, head_dim, channels;

  explicit AttentionShape(const torch::Tensor& qkv, int64_t num_heads)
      : batch(qkv.size(0)),
        tokens(qkv.size(1)),
        heads(num_heads),
        head_dim(qkv.size(2) / 3 / num_heads),
        channels(qkv.size(2) / 3) {}
  int64_t QkvRow() const { return 3 * channels; }
  int64_t QkvOffset(int64_t b, int64_t h) const { return b * tokens * QkvRow() + h * head_dim; }
  int64_t OutOffset(int64_t b, int64_t h) const { return b * tokens * channels + h * head_dim; }
  int64_t ProbsOffset(int64_t b, int64_t h) const { return (b * heads + h) * tokens * tokens; }
};

// Runs fn(b, h) for every (batch, head) pair on LibTorch's intra-op threads.
template <typename Fn>
void ForEachHead(const AttentionShape& s, const Fn& fn) {
  at::parallel_for(0, s.batch * s.heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i / s.heads, i % s.heads);
  });
}

// Returns {out [B, N, C], probs [B, H, N, N]}.
std::pair<torch::Tensor, torch::Tensor> Forward(const torch::Tensor& qkv, int64_t num_heads, float scale) {
  const AttentionShape s(qkv, num_heads);
  auto out = torch::empty({s.batch, s.tokens, s.channels}, qkv.options());
  auto probs = torch::empty({s.batch, s.heads, s.tokens, s.tokens}, qkv.options());
  const float* src = qkv.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  float* p_all = probs.data_ptr<float>();
  const int64_t n = s.tokens, d = s.head_dim, row = s.QkvRow();
  ForEachHead(s, [&](int64_t b, int64_t h) {
    const float* q = src + s.QkvOffset(b, h);
    float* p = p_all + s.ProbsOffset(b, h);
    Sgemm(false, true, n, n, d, scale, q, row, q + s.channels, row, 0.0f, p, n);  // scale * q k^T
    SoftmaxRowsInPlace(p, n, n);
    Sgemm(false, false, n, d, n, 1.0f, p, n, q + 2 * s.channels, row, 0.0f, dst + s.OutOffset(b, h),
          s.channels);  // p v
  });
  return {out, probs};
}

torch::Tensor Backward(const torch::Tensor& qkv, const torch::Tensor& probs, const torch::Tensor& grad_out,
                       int64_t num_heads, float scale) {
  const AttentionShape s(qkv, num_heads);
  auto grad_qkv = torch::empty_like(qkv);  // every element is written: q, k and v blocks of every head
  const float* src = qkv.data_ptr<float>();
  const float* p_all = probs.data_ptr<float>();
  const float* go_all = grad_out.data_ptr<float>();
  float* gq_all = grad_qkv.data_ptr<float>();
  const int64_t n = s.tokens, d = s.head_dim, row = s.QkvRow(), c = s.channels;
  ForEachHead(s, [&](int64_t b, int64_t h) {
    thread_local std::vector<float> grad_scores;
    grad_scores.resize(n * n);
    float* ds = grad_scores.data();
    const float* q = src + s.QkvOffset(b, h);
    const float* p = p_all + s.ProbsOffset(b, h);
    const float* go = go_all + s.OutOffset(b, h);
    float* dq = gq_all + s.QkvOffset(b, h);
    Sgemm(true, false, n, d, n, 1.0f, p, n, go, c, 0.0f, dq + 2 * c, row);  // dv = p^T dout
    Sgemm(false, true, n, n, d, 1.0f, go, c, q + 2 * c, row, 0.0f, ds, n);  // dp = dout v^T
    SoftmaxBackwardRowsInPlace(p, ds, n, n, scale);                         // scale * d(scores)
    Sgemm(false, false, n, d, n, 1.0f, ds, n, q + c, row, 0.0f, dq, row);   // dq = ds k
    Sgemm(true, false, n, d, n, 1.0f, ds, n, q, row, 0.0f, dq + c, row);    // dk = ds^T q
  });
  return grad_qkv;
}

class FusedAttentionFunction : public torch::autograd::Function<FusedAttentionFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& qkv,
                               int64_t num_heads, double scale) {
    auto [out, probs] = Forward(qkv, num_heads, static_cast<float>(scale));
    ctx->save_for_backward({qkv, probs});
    ctx->saved_data["num_heads"] = num_heads;
    ctx->saved_data["scale"] = scale;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    auto grad_qkv =
        Backward(saved[0], saved[1], grad_outputs[0].contiguous(), ctx->saved_data["num_heads"].toInt(),
                 static_cast<float>(ctx->saved_data["scale"].toDouble()));
    return {grad_qkv, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

bool FusedAttentionApplies(const torch::Tensor& qkv, int64_t num_heads) {
  return FusedKernelsEnabled() && HaveBlasGemm() && qkv.device().is_cpu() &&
         qkv.scalar_type() == torch::kFloat && qkv.dim() == 3 && num_heads > 0 &&
         qkv.size(2) % (3 * num_heads) == 0 && qkv.size(1) > 0;
}

torch::Tensor FusedAttention(const torch::Tensor& qkv, int64_t num_heads, double scale) {
  TORCH_CHECK(FusedAttentionApplies(qkv, num_heads), "FusedAttention: unsupported input ", qkv.sizes(), " ",
              qkv.scalar_type(), " on ", qkv.device(), " with ", num_heads, " heads");
  auto input = qkv.contiguous();
  if (!(torch::GradMode::is_enabled() && input.requires_grad())) {
    return Forward(input, num_heads, static_cast<float>(scale)).first;  // nothing to save for backward
  }
  return FusedAttentionFunction::apply(input, num_heads, scale);
}

torch::Tensor CompositeAttention(const torch::Tensor& qkv, int64_t num_heads, double scale,
                                 const std::function<torch::Tensor(const torch::Tensor&)>& attn_dropout) {
  const int64_t b = qkv.size(0), n = qkv.size(1), c = qkv.size(2) / 3;
  auto heads = qkv.reshape({b, n, 3, num_heads, c / num_heads}).permute({2, 0, 3, 1, 4}).unbind(0);
  auto attn = torch::softmax(torch::matmul(heads[0] * scale, heads[1].transpose(-2, -1)), -1);
  if (attn_dropout) attn = attn_dropout(attn);
  return torch::matmul(attn, heads[2]).transpose(1, 2).reshape({b, n, c});
}

}  // namespace nmsparse
