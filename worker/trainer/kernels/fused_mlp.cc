#include "worker/trainer/kernels/fused_mlp.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "worker/compat/torch_compat.h"
#include "worker/trainer/kernels/bias_rows.h"
#include "worker/trainer/kernels/blas_gemm.h"
#include "worker/trainer/kernels/fused_kernels_switch.h"
#include "worker/trainer/kernels/gelu_rows.h"

namespace nmsparse {
namespace {

// Sizes of one call: `rows` tokens, fc1 [hidden, in], fc2 [out, hidden], and the row block.
struct MlpShape {
  int64_t rows, in, hidden, out, block;

  MlpShape(int64_t rows, const torch::Tensor& fc1_weight, const torch::Tensor& fc2_weight)
      : rows(rows),
        in(fc1_weight.size(1)),
        hidden(fc1_weight.size(0)),
        out(fc2_weight.size(0)),
        // 256 to 1024 rows (about 4 MB of hidden activations): large enough for BLAS to run at full speed
        // (64-row blocks cost ViT-S 5%), small enough that the hidden gradient never exists at full size.
        block(std::clamp<int64_t>((int64_t{1} << 20) / std::max<int64_t>(hidden, 1), 256, 1024)) {}
  int64_t Blocks() const { return (rows + block - 1) / block; }
};

// Runs fn(task, first_block, end_block) over the row blocks, one contiguous range of blocks per thread.
template <typename Fn>
void ForEachBlockRange(const MlpShape& s, int64_t tasks, const Fn& fn) {
  const int64_t blocks = s.Blocks();
  at::parallel_for(0, tasks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) fn(t, blocks * t / tasks, blocks * (t + 1) / tasks);
  });
}

struct ForwardResult {
  torch::Tensor out, fc1_out, gelu_out;
};

ForwardResult Forward(const torch::Tensor& x, const torch::Tensor& w1, const torch::Tensor& b1,
                      const torch::Tensor& w2, const torch::Tensor& b2) {
  const MlpShape s(x.size(0), w1, w2);
  ForwardResult r{torch::empty({s.rows, s.out}, x.options()), torch::empty({s.rows, s.hidden}, x.options()),
                  torch::empty({s.rows, s.hidden}, x.options())};
  const float *xp = x.data_ptr<float>(), *w1p = w1.data_ptr<float>(), *b1p = b1.data_ptr<float>();
  const float *w2p = w2.data_ptr<float>(), *b2p = b2.data_ptr<float>();
  float *hp = r.fc1_out.data_ptr<float>(), *yp = r.gelu_out.data_ptr<float>(), *op = r.out.data_ptr<float>();
  ForEachBlockRange(s, s.Blocks(), [&](int64_t, int64_t first, int64_t end) {
    for (int64_t blk = first; blk < end; ++blk) {
      const int64_t r0 = blk * s.block, n = std::min(s.block, s.rows - r0);
      float* h = hp + r0 * s.hidden;
      float* y = yp + r0 * s.hidden;
      Sgemm(false, true, n, s.hidden, s.in, 1.0f, xp + r0 * s.in, s.in, w1p, s.in, 0.0f, h, s.hidden);
      BiasGeluRows(h, b1p, y, n, s.hidden);
      Sgemm(false, true, n, s.out, s.hidden, 1.0f, y, s.hidden, w2p, s.hidden, 0.0f, op + r0 * s.out, s.out);
      AddBiasRows(op + r0 * s.out, b2p, n, s.out);
    }
  });
  return r;
}

// Gradients of one thread's blocks: written into the outputs by thread 0, into partial sums by the others.
struct WeightGrads {
  torch::Tensor w1, b1, w2, b2;

  static WeightGrads Zeros(const MlpShape& s, const torch::TensorOptions& options) {
    return {torch::zeros({s.hidden, s.in}, options), torch::zeros({s.hidden}, options),
            torch::zeros({s.out, s.hidden}, options), torch::zeros({s.out}, options)};
  }
  void Add(const WeightGrads& other) {
    w1.add_(other.w1);
    b1.add_(other.b1);
    w2.add_(other.w2);
    b2.add_(other.b2);
  }
};

torch::autograd::variable_list Backward(const torch::Tensor& grad_out, const torch::Tensor& x,
                                        const torch::Tensor& h, const torch::Tensor& y,
                                        const torch::Tensor& w1, const torch::Tensor& w2) {
  const MlpShape s(x.size(0), w1, w2);
  auto grad_x = torch::empty_like(x);
  const int64_t tasks = std::min<int64_t>(at::get_num_threads(), s.Blocks());
  std::vector<WeightGrads> grads;
  for (int64_t t = 0; t < tasks; ++t) grads.push_back(WeightGrads::Zeros(s, x.options()));
  const float *gp = grad_out.data_ptr<float>(), *xp = x.data_ptr<float>(), *hp = h.data_ptr<float>();
  const float *yp = y.data_ptr<float>(), *w1p = w1.data_ptr<float>(), *w2p = w2.data_ptr<float>();
  float* gxp = grad_x.data_ptr<float>();
  ForEachBlockRange(s, tasks, [&](int64_t task, int64_t first, int64_t end) {
    thread_local std::vector<float> grad_hidden;
    grad_hidden.resize(s.block * s.hidden);
    float* gh = grad_hidden.data();
    WeightGrads& acc = grads[task];
    float *gw1 = acc.w1.data_ptr<float>(), *gb1 = acc.b1.data_ptr<float>();
    float *gw2 = acc.w2.data_ptr<float>(), *gb2 = acc.b2.data_ptr<float>();
    for (int64_t blk = first; blk < end; ++blk) {
      const int64_t r0 = blk * s.block, n = std::min(s.block, s.rows - r0);
      const float* g = gp + r0 * s.out;
      AddColumnSums(g, gb2, n, s.out);
      Sgemm(true, false, s.out, s.hidden, n, 1.0f, g, s.out, yp + r0 * s.hidden, s.hidden, 1.0f, gw2,
            s.hidden);  // dW2 += g^T y
      Sgemm(false, false, n, s.hidden, s.out, 1.0f, g, s.out, w2p, s.hidden, 0.0f, gh, s.hidden);  // dy
      GeluBackwardRowsWithBiasGrad(hp + r0 * s.hidden, gh, gb1, n, s.hidden);  // dh = dy gelu'(h); db1
      Sgemm(true, false, s.hidden, s.in, n, 1.0f, gh, s.hidden, xp + r0 * s.in, s.in, 1.0f, gw1,
            s.in);  // dW1 += dh^T x
      Sgemm(false, false, n, s.in, s.hidden, 1.0f, gh, s.hidden, w1p, s.in, 0.0f, gxp + r0 * s.in, s.in);
    }
  });
  for (int64_t t = 1; t < tasks; ++t) grads[0].Add(grads[t]);  // fixed order: deterministic per thread count
  return {grad_x, grads[0].w1, grads[0].b1, grads[0].w2, grads[0].b2};
}

class FusedMlpFunction : public torch::autograd::Function<FusedMlpFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& w1, const torch::Tensor& b1, const torch::Tensor& w2,
                               const torch::Tensor& b2) {
    auto r = Forward(x, w1, b1, w2, b2);
    ctx->save_for_backward({x, r.fc1_out, r.gelu_out, w1, w2});
    return r.out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    return Backward(grad_outputs[0].contiguous(), saved[0], saved[1], saved[2], saved[3], saved[4]);
  }
};

bool IsCpuFloat(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat;
}

}  // namespace

bool FusedMlpApplies(const torch::Tensor& x, const torch::Tensor& fc1_weight, const torch::Tensor& fc1_bias,
                     const torch::Tensor& fc2_weight, const torch::Tensor& fc2_bias) {
  if (!FusedKernelsEnabled() || !HaveBlasGemm() || !GeluRowsVectorised() ||
      compat::IsAutocastEnabled(at::kCPU)) {
    return false;
  }
  for (const auto* t : {&x, &fc1_weight, &fc1_bias, &fc2_weight, &fc2_bias}) {
    if (!IsCpuFloat(*t)) return false;
  }
  return x.dim() >= 2 && fc1_weight.dim() == 2 && fc2_weight.dim() == 2 && x.size(-1) == fc1_weight.size(1) &&
         fc2_weight.size(1) == fc1_weight.size(0) && fc1_bias.numel() == fc1_weight.size(0) &&
         fc2_bias.numel() == fc2_weight.size(0) && x.numel() > 0;
}

torch::Tensor FusedMlp(const torch::Tensor& x, const torch::Tensor& fc1_weight, const torch::Tensor& fc1_bias,
                       const torch::Tensor& fc2_weight, const torch::Tensor& fc2_bias) {
  TORCH_CHECK(FusedMlpApplies(x, fc1_weight, fc1_bias, fc2_weight, fc2_bias), "FusedMlp: unsupported input ",
              x.sizes(), " with fc1 ", fc1_weight.sizes(), " and fc2 ", fc2_weight.sizes());
  auto out_shape = x.sizes().vec();
  out_shape.back() = fc2_weight.size(0);
  auto rows = x.reshape({-1, x.size(-1)}).contiguous();
  auto w1 = fc1_weight.contiguous(), b1 = fc1_bias.contiguous();
  auto w2 = fc2_weight.contiguous(), b2 = fc2_bias.contiguous();
  const bool needs_grad =
      torch::GradMode::is_enabled() && (rows.requires_grad() || w1.requires_grad() || b1.requires_grad() ||
                                        w2.requires_grad() || b2.requires_grad());
  auto out = needs_grad ? FusedMlpFunction::apply(rows, w1, b1, w2, b2) : Forward(rows, w1, b1, w2, b2).out;
  return out.view(out_shape);
}

}  // namespace nmsparse
