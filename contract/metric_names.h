// Names of the values and labels in nmtrain's metric lines (contract/metric_line.h) that other programs read:
// the coordinator's dashboard, nmctl's tables and the report. Standard library only, like all of contract/.
#ifndef NMSPARSE_CONTRACT_METRIC_NAMES_H_
#define NMSPARSE_CONTRACT_METRIC_NAMES_H_

namespace nmsparse::contract {

// Values.
constexpr char kTop1[] = "top1";  // Eval top-1 accuracy (%): the metric sweeps are compared on by default.
constexpr char kTop5[] = "top5";
constexpr char kBestTop1[] = "best_top1";  // The best eval top-1 so far (final line).
constexpr char kLoss[] = "loss";           // Mean training loss of the epoch (step lines: of the last steps).
constexpr char kEvalLoss[] = "eval_loss";
constexpr char kLearningRate[] = "lr";
constexpr char kImagesPerSecond[] = "images_per_s";  // Training throughput.
constexpr char kFlops[] = "flops";                   // Training FLOPs so far.
// The model EMA's evaluation (model.ema: timm's ModelEmaV2), beside the trained weights' top1 / top5 /
// eval_loss in the epoch and final lines of runs that keep one.
constexpr char kEmaTop1[] = "ema_top1";
constexpr char kEmaTop5[] = "ema_top5";
constexpr char kEmaEvalLoss[] = "ema_eval_loss";
// The deployable model's evaluation (final line of sparse N:M runs; docs/interop.md): the trained weights
// with every sparse layer hard-masked at its target N:M, no decayed leak (what `nmtrain --export` writes),
// and the same for the model EMA's weights (runs with model.ema). kTop1 / kEmaTop1 are the trained weights
// under the rule of the last step, which for a decaying recipe (MDGF, SDGF) still lets D(end) of every pruned
// weight through.
constexpr char kDeployTop1[] = "deploy_top1";
constexpr char kEmaDeployTop1[] = "ema_deploy_top1";
constexpr char kParams[] = "params";  // The model's parameters (final line): size sweeps compare on it.
constexpr char kEpochs[] = "epochs";  // Epochs trained (final line).
constexpr char kTrainSeconds[] = "train_seconds";  // Training time over epochs, before a resume too (final).
// Images of the epoch that could not be decoded and were replaced by the next, over all ranks (epoch lines of
// runs on stored images; worker/trainer/data/decode_failure_log.h): in training, and in the evaluation of
// the trained weights (the EMA's reads the same images).
constexpr char kDecodeFailures[] = "decode_failures";
constexpr char kEvalDecodeFailures[] = "eval_decode_failures";
// fp16 runs (loss scaling, docs/nmtrain.md "Precision"), in step, epoch and final lines: the optimizer steps
// skipped so far for an inf or NaN gradient, and the loss scale now.
constexpr char kSkippedSteps[] = "skipped_steps";
constexpr char kLossScale[] = "loss_scale";

// Forward FLOPs per image of the model the run ends with, its sparse locations at their target N/M (final
// line; docs/sparsity-method.md §10). kFlops counts training by what each recipe computes.
constexpr char kInferenceFlops[] = "inference_flops";

// The N:M recipe's state at the line's step (docs/sparsity-method.md §2-§4): the value D(j) applied to pruned
// weights, and the labels of the N:M in force (the SDGF stage) and the phase.
constexpr char kDecayValue[] = "d";
constexpr char kNmStageLabel[] = "nm_stage";
constexpr char kPhaseLabel[] = "phase";

// The sparse layers' diagnostics at log points (epoch and step lines; docs/sparsity-method.md §11), over all
// sparse layers and per layer kind after a "/" ("flip_rate/ff", kinds ff, qkv, o, c): the share of mask
// entries changed since the previous log point, and the L2 norms of dL/dW at pruned and at kept weights.
constexpr char kFlipRate[] = "flip_rate";
constexpr char kGradNormPruned[] = "grad_norm_pruned";
constexpr char kGradNormKept[] = "grad_norm_kept";

// HU24's held transposable mask (docs/sparsity-method.md §12), at step and epoch lines: the 1-based optimizer
// step whose forward last recomputed it (0: none yet, all ones), and the authors' flip rate, the share of
// mask entries that changed at that refresh against the one before (0 at the first), held until the next.
constexpr char kMaskRefreshStep[] = "mask_refresh_step";
constexpr char kRefreshFlipRate[] = "refresh_flip_rate";

// BIMASK (docs/sparsity-method.md §14), at step and epoch lines: the forward calls its layers have run (the
// authors' counter, evaluation included; the permutation is searched at calls 0, I, 2I, ...), and the share
// of the sparse weights the last backward masks keep (what the permutation search maximises; N/M at best).
constexpr char kBimaskForwardCalls[] = "bimask_forward_calls";
constexpr char kBackwardMaskDensity[] = "backward_mask_density";

// Labels of the epoch and final lines: rank 0's device ("cuda:0 (GPU 2) NVIDIA H100 80GB HBM3", "cpu") and
// every rank's, joined with "; " in rank order.
constexpr char kDeviceLabel[] = "device";
constexpr char kDevicesLabel[] = "devices";
// Label of the epoch and final lines: the arithmetic the run trained in ("fp32", "bf16", "fp16").
constexpr char kPrecisionLabel[] = "precision";
// Labels of the epoch and final lines: rank 0's BLAS ("OpenBLAS 0.3.21 (libblas.so.3)"), the kernels it runs
// ("SkylakeX"; "n/a" for a BLAS that does not say) and the CPU's widest vector ISA ("avx512", "avx2", ...):
// a run on a generic BLAS core trains several times slower (docs/nmtrain.md "BLAS").
constexpr char kBlasLabel[] = "blas";
constexpr char kBlasCoreLabel[] = "blas_core";
constexpr char kCpuIsaLabel[] = "cpu_isa";

// Per semi-structured 2:4 linear (docs/accelerated-2-4.md), in every epoch line: the label
// "semi_structured/<layer>" says which path its last forward took and why ("weight_2:4 masked dense (device
// cpu)"), the value "speedup_2_4/<layer>" is dense / 2:4 GPU time of its GEMM (0 when not timed).
constexpr char kSemiStructuredLabelPrefix[] = "semi_structured/";
constexpr char kSpeedup24ValuePrefix[] = "speedup_2_4/";

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_METRIC_NAMES_H_
