// The paper's diagnostics of the sparse layers (docs/sparsity-method.md §11): at a log point, per layer, the
// share of mask entries that changed since the previous log point (SR-STE's flip rate) and the squared norm
// of the gradient reaching W at pruned and at kept positions.
//
// Observe() runs after the backward pass of the step that ends a log window, before clipping and the
// optimizer step, so W is the weight that step's forward masked and the mask it recomputes is that forward's
// mask; a layer whose method holds its own mask (HU24's, refreshed every k steps) is read from it. It
// only queues device work: the previous mask stays on the device (1 byte per sparse weight) and the per-layer
// sums stay there until Read(), the one host read, at the log point that syncs anyway.
#ifndef NMSPARSE_WORKER_SPARSITY_SPARSITY_DIAGNOSTICS_H_
#define NMSPARSE_WORKER_SPARSITY_SPARSITY_DIAGNOSTICS_H_

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nmsparse {

struct LayerRule;

struct LayerDiagnostics {
  std::string name;  // Module name, e.g. "blocks.0.mlp.fc1".
  std::string kind;  // "ff" (fc1, fc2), "qkv", "o" (attn.proj) or "c" (patch_embed.proj).
  int64_t numel = 0;
  double flipped = -1.0;        // Mask entries changed since the previous observation; -1: no previous one.
  double pruned_grad_sq = 0.0;  // Sum of dL/dW squared over pruned positions.
  double kept_grad_sq = 0.0;    // ... over kept positions.
};

class SparsityDiagnostics {
 public:
  // The mask a method holds for a layer, by module name (SparsityMethod::HeldMask); undefined: the rule's.
  using HeldMaskFunction = std::function<torch::Tensor(const std::string& layer)>;

  // Every SparseLinear / SparseConv2d of `model` (which must outlive this); a layer counts at an observation
  // when the engine has given it a sparse rule, or its method holds a mask for it, and its weight has a
  // gradient. `held_mask`, when set, gives the mask of a layer whose method holds its own (HU24's, dynamic
  // sparsity's); the others' masks follow from their rule.
  explicit SparsityDiagnostics(torch::nn::Module& model, HeldMaskFunction held_mask = {});

  // Device work only. `line_step`: the step count of the metric line(s) that will show it.
  void Observe(int64_t line_step);
  // The values observed for the line at `line_step` (read to the host once; a step line and an epoch line at
  // the same step get the same values), or nothing when none was observed for it.
  std::vector<LayerDiagnostics> Read(int64_t line_step);

  // The bytes kept between observations (the previous masks).
  int64_t KeptBytes() const;

 private:
  struct Layer {
    std::string name;
    std::string kind;
    torch::Tensor weight;
    std::function<const LayerRule*()> rule;
    torch::Tensor previous_kept;  // Bool, on the weight's device; undefined before the first observation.
  };
  HeldMaskFunction held_mask_;
  std::vector<Layer> layers_;
  std::vector<const Layer*> observed_;  // The rows of pending_, in order.
  torch::Tensor pending_;               // [observed, 3] double: flipped, pruned and kept squared sums.
  int64_t observed_step_ = -1;          // line_step of the last observation.
  std::vector<LayerDiagnostics> read_;  // Its values, once read.
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SPARSITY_DIAGNOSTICS_H_
