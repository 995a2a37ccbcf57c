// Lion (Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms") with timm's semantics
// (timm.optim.Lion, timm 1.0.31): decoupled weight decay p *= 1 - lr * wd, the update sign(beta1 m + (1 -
// beta1) g) taken at lr, then m = beta2 m + (1 - beta2) g. Hu et al.'s DeiT recipe trains with it
// (docs/sparsity-method.md §12). optimizer.name: lion selects it (optimizer.h).
#ifndef NMSPARSE_WORKER_TRAINER_OPTIM_LION_H_
#define NMSPARSE_WORKER_TRAINER_OPTIM_LION_H_

#include <torch/optim/optimizer.h>
#include <torch/optim/serialize.h>
#include <torch/types.h>

#include <string>
#include <tuple>
#include <vector>

#include "worker/trainer/optim/optimizer_update.h"

namespace nmsparse {

struct LionHyper {
  double lr = 1e-4;
  double beta1 = 0.9;
  double beta2 = 0.99;
  double weight_decay = 0.0;
};

// One Lion update of `param` from `grad`, in place, with its momentum `exp_avg` (param's shape, zeros at the
// first step). Element-wise tensor ops, so any device. `found_inf`, when defined (a [1] float flag on the
// param's device), turns the update into a no-op where it is 1, without a host read.
void LionUpdate(torch::Tensor& param, const torch::Tensor& grad, torch::Tensor& exp_avg,
                const LionHyper& hyper, const torch::Tensor& found_inf = torch::Tensor());

// A param group's settings, in LibTorch's manner (torch::optim::AdamWOptions); timm's defaults.
struct LionOptions : public torch::optim::OptimizerCloneableOptions<LionOptions> {
  explicit LionOptions(double lr = 1e-4) : lr_(lr) {}
  TORCH_ARG(double, lr);
  typedef std::tuple<double, double> betas_t;
  TORCH_ARG(betas_t, betas) = std::make_tuple(0.9, 0.99);
  TORCH_ARG(double, weight_decay) = 0.0;

 public:  // TORCH_ARG leaves the section private.
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};

// A parameter's state: the momentum, made at its first update.
struct LionParamState : public torch::optim::OptimizerCloneableParamState<LionParamState> {
  TORCH_ARG(torch::Tensor, exp_avg);

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

// Lion as a LibTorch optimizer: param groups, state and checkpoints as torch::optim::AdamW keeps them.
class Lion : public torch::optim::Optimizer {
 public:
  Lion(std::vector<torch::optim::OptimizerParamGroup> param_groups, LionOptions defaults);

  torch::Tensor step(LossClosure closure = nullptr) override;
  // step() with the loss scaler's found-inf flag (see LionUpdate).
  void Update(const torch::Tensor& found_inf);
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
};

// The trainer's update with Lion. On a GPU a step with inf gradients is skipped on the device; on the CPU,
// as AdamW's unfused step, the caller decides on the host.
class LionStep : public OptimizerUpdate {
 public:
  LionStep(Lion& optimizer, bool on_gpu) : optimizer_(optimizer), on_gpu_(on_gpu) {}
  void operator()(const torch::Tensor& found_inf) override { optimizer_.Update(found_inf); }
  bool skips_on_device() const override { return on_gpu_; }
  std::string Describe() const override { return "Lion"; }

 private:
  Lion& optimizer_;
  bool on_gpu_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_OPTIM_LION_H_
