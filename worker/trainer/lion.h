// Lion (Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms") with timm's semantics
// (timm.optim.Lion, timm 1.0.31): decoupled weight decay p *= 1 - lr * wd, the update sign(beta1 m + (1 -
// beta1) g) taken at lr, then m = beta2 m + (1 - beta2) g. Hu et al.'s DeiT recipe trains with it
// (docs/sparsity-method.md §12).
#ifndef NMSPARSE_WORKER_TRAINER_LION_H_
#define NMSPARSE_WORKER_TRAINER_LION_H_

#include <torch/types.h>

namespace nmsparse {

struct LionHyper {
  double lr = 1e-4;
  double beta1 = 0.9;
  double beta2 = 0.99;
  double weight_decay = 0.0;
};

// One Lion update of `param` from `grad`, in place, with its momentum `exp_avg` (param's shape, zeros at the
// first step). Element-wise tensor ops, so any device.
void LionUpdate(torch::Tensor& param, const torch::Tensor& grad, torch::Tensor& exp_avg,
                const LionHyper& hyper);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_LION_H_
