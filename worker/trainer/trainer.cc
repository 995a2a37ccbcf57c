#include "worker/trainer/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/checked_file.h"
#include "contract/metric_line.h"
#include "contract/metric_names.h"
#include "contract/run_directory.h"
#include "schemas/gemm_density.h"
#include "schemas/model_arch_text.h"
#include "schemas/model_catalog.h"
#include "schemas/model_flops.h"
#include "schemas/semi_structured_layers.h"
#include "worker/sparsity/semi_structured/semi_structured_layers_setup.h"
#include "worker/sparsity/sparsity_diagnostics.h"
#include "worker/sparsity/sparsity_method.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/checkpoint/resume.h"
#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/prefetch_loader.h"
#include "worker/trainer/data/run_data.h"
#include "worker/trainer/data/synthetic_dataset.h"  // HashCombine
#include "worker/trainer/device/blas_check.h"
#include "worker/trainer/device/device_setup.h"
#include "worker/trainer/device/host_reads.h"
#include "worker/trainer/device/sync_debug.h"
#include "worker/trainer/distributed/decode_failures_across_ranks.h"
#include "worker/trainer/distributed/distributed.h"
#include "worker/trainer/distributed/gradient_averager.h"
#include "worker/trainer/evaluator.h"
#include "worker/trainer/interop/initial_weights.h"
#include "worker/trainer/loss/loss.h"
#include "worker/trainer/loss/mixup.h"
#include "worker/trainer/metrics/metrics_writer.h"
#include "worker/trainer/metrics/progress_ticker.h"
#include "worker/trainer/metrics/run_metric_fields.h"
#include "worker/trainer/model_ema.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/optim/optimizer.h"
#include "worker/trainer/optim/optimizer_step.h"
#include "worker/trainer/precision/autocast_guard.h"
#include "worker/trainer/precision/loss_scaler.h"
#include "worker/trainer/run_parts.h"
#include "worker/trainer/scheduler/lr_scheduler.h"
#include "worker/trainer/test_hooks.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// A multi-rank run without step lines still agrees on a stop this often (the only per-interval collective).
constexpr int64_t kStopAgreementSteps = 20;

// Everything a run is made of, in construction order.
class Run {
 public:
  Run(const ExperimentConfig& config, const TrainerOptions& options)
      : c_(config),
        o_(options),
        log_(*options.log),
        arch_(ResolveArch(config)),
        autocast_dtype_(AutocastDtypeOf(config.resources.precision)),
        loss_(config.optimizer),
        mixup_(MixupOptionsFrom(config.optimizer, arch_.num_classes)) {
    torch::set_num_threads(std::max(1, options.threads));
    const DistributedEnv env = ReadDistributedEnv();
    const OpenedDevice opened = OpenDevice(options.device, env.local_rank);
    device_ = opened.device;
    sync_debug_ = StepSyncDebug(device_.is_cuda());
    if (autocast_dtype_ == at::kHalf && !HasFp16Autocast(device_.type())) {
      throw TrainerError(
          kExitUsage,
          "resources.precision fp16: float16 autocast on the CPU needs LibTorch 2.4 or later, and "
          "this nmtrain is built against " +
              std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) +
              " (use fp32 or bf16 on the CPU, or a GPU)");
    }
    if (autocast_dtype_ == at::kHalf || options.test.loss_scaling) {
      LossScalerOptions scaling;
      if (options.test.loss_scale_growth_interval > 0)
        scaling.growth_interval = options.test.loss_scale_growth_interval;
      scaler_ = std::make_unique<LossScaler>(scaling, device_);
    }
    dist_ = std::make_unique<Distributed>(env, options.timeout, device_.is_cuda(), device_);
    device_label_ = opened.description;
    devices_label_ = absl::StrJoin(GatherDeviceDescriptions(*dist_, opened.description), "; ");
    rank_prefix_ = dist_->world_size() > 1 ? "[rank " + std::to_string(dist_->rank()) + "] " : "";
    data_ = LoadData(config, arch_);
    const int accum = std::max(1, config.optimizer.grad_accum_steps);
    if (config.data.batch_size % dist_->world_size() != 0) {
      throw TrainerError(kExitUsage, "data.batch_size " + std::to_string(config.data.batch_size) +
                                         " is not divisible by the " + std::to_string(dist_->world_size()) +
                                         " ranks");
    }
    // Stored images flip inside their transform (timm's order: after the crop, before RandAugment).
    loader_ = std::make_unique<TrainLoader>(
        data_.train.get(), config.data.batch_size, dist_->rank(), dist_->world_size(), config.seed,
        AugmentOptions{config.data.random_crop_padding, data_.encoded_train ? 0.0 : config.data.hflip},
        data_.norm, config.data.aug_repeats, data_.transforms.train_finish);
    accum_ = accum;
    loader_threads_ = LoaderThreads(options, config, device_);
    transfer_ = std::make_unique<DeviceTransfer>(data_.norm, device_);
    steps_per_epoch_ = loader_->steps_per_epoch() / accum;
    if (steps_per_epoch_ < 1) {
      throw TrainerError(kExitData,
                         "the training set has " + std::to_string(data_.train->size()) +
                             " images, fewer than one optimizer step of batch_size * grad_accum_steps = " +
                             std::to_string(int64_t{config.data.batch_size} * accum));
    }
    torch::manual_seed(config.seed);  // Same initial weights on every rank; rank 0's are broadcast anyway.
    model_ = CreateModel(arch_, DropOptions()
                                    .drop_rate(config.model.drop_rate)
                                    .drop_path_rate(config.model.drop_path_rate)
                                    .attn_drop_rate(config.model.attn_drop_rate));
    // Before the sparsity method exists: its first masks come from these weights. A resume or a fork
    // replaces them with its checkpoint's.
    if (!config.model.initial_checkpoint.empty()) {
      const auto start = std::chrono::steady_clock::now();
      LoadInitialWeights(config.model.initial_checkpoint, arch_, *model_, Log(),
                         config.model.initial_checkpoint_sha256);
      // Read by bench/interop_bench.sh.
      Log() << "initial weights: " << config.model.initial_checkpoint << " loaded in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
    }
    model_->to(device_);
    // STEP's switch, shared by its optimizer update and its sparse linears (step_method.h).
    auto step_switch =
        config.sparsity.sparsity_type == SparsityType::kStep ? std::make_shared<StepSwitch>() : nullptr;
    TrainingOptimizer made =
        MakeOptimizer(*model_, config.optimizer, /*on_gpu=*/device_.is_cuda(), step_switch);
    optimizer_ = std::move(made.optimizer);
    update_ = std::move(made.update);
    lr_scales_ = std::move(made.lr_scales);
    schedule_ = MakeLrScheduler(config.schedule, config.optimizer.lr, steps_per_epoch_);
    epochs_ = schedule_->TrainedEpochs();
    log_every_ = config.schedule.LogEverySteps(epochs_ * steps_per_epoch_);
    sparsity_ = MakeSparsity(config, epochs_, steps_per_epoch_, *model_, optimizer_.get(),
                             scaler_ ? scaler_->scale() : torch::Tensor(), step_switch);
    semi_structured_ = MakeSemiStructured(config, epochs_, steps_per_epoch_, *model_, device_);
    // Root's gradients are the averaged ones, so it alone observes (docs/sparsity-method.md §11).
    if (config.schedule.sparsity_diagnostics && dist_->is_root())
      diagnostics_ = std::make_unique<SparsityDiagnostics>(
          *model_, [this](const std::string& layer) { return sparsity_->HeldMask(layer); });
    params_ = model_->parameters();
    averager_ = std::make_unique<GradientAverager>(*dist_, params_);
    step_ = std::make_unique<OptimizerStep>(params_, *update_, *sparsity_, config.optimizer.clip_grad_norm,
                                            scaler_.get());
    if (scaler_ && !step_->host_skip() && config.sparsity.IsDynamic()) {
      throw TrainerError(
          kExitUsage,
          "resources.precision fp16 with dynamic sparsity (sparsity.dynamic) is not supported on a "
          "GPU: its mask updates would need the skip decision on the host every step");
    }
  }

  int Train() {
    if (dist_->is_root()) MakeDirs(o_.out_dir);
    // Before the spec file, so that a refused resume (other seed or precision) leaves the directory as is.
    RestoreOrStartFresh(MakeResumeRequest(), *model_, *optimizer_, *sparsity_, state_, log_);
    if (scaler_ && state_.loss_scaler.defined()) scaler_->Load(state_.loss_scaler);
    LoadSchedulerState();
    if (dist_->is_root()) WriteSpecFile();
    dist_->BroadcastModel(*model_);
    StartEma();
    PrepareSemiStructured();
    StartBatches();
    Log() << "training on " << devices_label_ << "\n";
    Log() << arch_.name << ": " << data_.train->size() << " training images, " << steps_per_epoch_
          << " steps/epoch x " << epochs_ << " epochs, " << dist_->world_size() << " rank(s), "
          << torch::get_num_threads() << " thread(s), " << loader_threads_ << " loader thread(s), "
          << PrecisionText() << ", " << loss_.Describe()
          << (loss_.dense_targets() ? " over " + mixup_.mode + "-mode Mixup/CutMix" : "")
          << (ema_ ? ", model EMA (decay " + std::to_string(ema_->decay()) + ")" : "") << ", "
          << update_->Describe()
          << (sync_debug_.on() ? ", CUDA sync debug mode (a synchronising call in a step is an error)" : "")
          << "\n";
    for (int epoch = state_.epoch; epoch < epochs_; ++epoch) {
      if (!TrainEpoch(epoch)) return kExitTerminated;
      FinishEpoch(epoch);
      hold_.AfterEpochs(state_.epoch);
    }
    EvaluateDeployable();
    EmitFinal();
    return kExitOk;
  }

 private:
  // Field by field: a positional brace-init lets same-typed neighbours (rank and world_size) swap unseen.
  ResumeRequest MakeResumeRequest() const {
    ResumeRequest r;
    r.out_dir = o_.out_dir;
    r.resume = o_.resume;
    r.seed = c_.seed;
    r.precision = c_.resources.precision;
    r.architecture = ArchitectureText(arch_);
    r.rank = dist_->rank();
    r.world_size = dist_->world_size();
    r.device = device_;
    r.log_prefix = rank_prefix_;
    r.init_from = o_.init_from;
    r.total_steps = steps_per_epoch_ * epochs_;
    return r;
  }

  std::ostream& Log() { return log_ << rank_prefix_; }

  // model.ema: timm's ModelEmaV2, made after the weights are final on every rank (a resume's, a fork's or the
  // broadcast initial ones), from the checkpoint's EMA when it has one, else as a copy of the weights.
  void StartEma() {
    if (!c_.model.ema) return;
    ema_ = std::make_unique<ModelEma>(*model_, c_.model.ema_decay);
    if (absl::Status loaded = ema_->Load(state_.ema); !loaded.ok())
      throw TrainerError(kExitTraining, std::string(loaded.message()));
    state_.ema.clear();
  }

  // The batches of the run from where it stands (a resume continues mid-epoch), built ahead on loader
  // threads into pinned memory when training on a GPU.
  void StartBatches() {
    const int64_t per_epoch = steps_per_epoch_ * accum_;
    const bool pin = device_.is_cuda();
    prefetch_ = std::make_unique<PrefetchLoader>(
        [this, per_epoch, pin](int64_t p) {
          thread_local const bool bound = (UseDeviceOnThisThread(device_), true);  // Once per loader thread.
          (void)bound;
          return loader_->GetHost(static_cast<int>(p / per_epoch), p % per_epoch, pin);
        },
        (state_.epoch * steps_per_epoch_ + state_.step_in_epoch) * accum_, epochs_ * per_epoch,
        loader_threads_, std::max(2, 2 * loader_threads_));
  }

  // The 2:4 layers' set-up (docs/accelerated-2-4.md): a forward pass at every batch shape of the run
  // (training micro-batch, evaluation batches), in eval mode (no dropout: no random numbers drawn) and
  // without autograd, so that every cuSPARSELt plan, algorithm search and timing happens here and none inside
  // a step.
  void PrepareSemiStructured() {
    if (!semi_structured_) return;
    std::set<int64_t> batches =
        EvalSplit(data_.eval->size(), c_.data.eval_batch_size, dist_->rank(), dist_->world_size())
            .BatchSizes();
    batches.insert(loader_->local_batch());
    semi_structured_->Prepare(state_.global_step, [&] {
      torch::NoGradGuard no_grad;
      model_->eval();
      for (int64_t b : batches) {
        ForwardLogits(*model_, torch::zeros({b, arch_.in_chans, arch_.img_size, arch_.img_size}, device_),
                      autocast_dtype_);
      }
      model_->train();
    });
  }

  // Returns false when stopped (checkpoint written at the step boundary). Nothing in a step reads a device
  // value on the host: the loss accumulates on the device and is read at sync points (AtSyncPoint) only, so
  // that a GPU's queue never drains inside the loop.
  bool TrainEpoch(int epoch) {
    model_->train();
    log_loss_ = log_images_ = log_seconds_ = 0.0;
    StartWindow();
    for (int64_t step = state_.step_in_epoch; step < steps_per_epoch_; ++step) {
      sync_debug_.BeginStep();
      sparsity_->BeginStep(epoch, state_.global_step);
      window_step_images_.push_back(0.0);
      if (semi_structured_) semi_structured_->BeginStep(state_.global_step);
      const double lr = schedule_->At(epoch, state_.global_step);
      SetLearningRate(*optimizer_, lr, lr_scales_);
      optimizer_->zero_grad();
      for (int k = 0; k < accum_; ++k) ForwardBackward(k);
      averager_->Finish();  // The buckets were all-reduced during the last backward pass.
      // Unscaling, the sparsity hooks, clipping, AdamW; skipped on inf (fp16). A log point's diagnostics see
      // the unscaled gradients before clipping (device only).
      const bool observe = diagnostics_ && EndsLogWindow(step);
      (*step_)(state_.global_step, [&] {
        if (observe) diagnostics_->Observe(state_.global_step + 1);
      });
      // timm's train.py: model_ema.update(model) after each optimizer step, also when the scaler skipped it.
      if (ema_) ema_->Update();
      ++state_.global_step;
      state_.step_in_epoch = step + 1;
      sync_debug_.EndStep();  // The sync point below reads the loss on the host.
      const bool stop_wanted = StopWanted();
      const bool stop = AtSyncPoint(stop_wanted) && Sync(epoch, lr, stop_wanted);
      if (o_.test.on_step_end) o_.test.on_step_end(state_.global_step);
      if (stop) {
        if (state_.step_in_epoch == steps_per_epoch_)
          FinishEpoch(epoch);  // Completes the epoch first.
        else
          Save();
        Log() << "stopped at step " << state_.global_step << "; checkpoint in " << o_.out_dir << "\n";
        return false;
      }
      EmitProgressIfDue(epoch);
      hold_.AfterSteps(state_.global_step);
    }
    return true;
  }

  // One micro-batch: forward, loss, backward; its loss is added to the window on the device.
  void ForwardBackward(int k) {
    averager_->Arm(k == accum_ - 1);  // Gradients are averaged during the last micro-batch's backward.
    const Batch batch = (*transfer_)(prefetch_->Next());
    auto images = batch.images;
    torch::Tensor targets = batch.labels;
    if (loss_.dense_targets()) {  // timm's Mixup; its draws are per micro-batch, so a resume redraws them.
      MixupRandom rng(
          HashCombine(c_.seed ^ 0x3ab1c0deULL, static_cast<uint64_t>(state_.global_step * accum_ + k)));
      targets = ApplyMixup(images, batch.labels, mixup_, MixupEnabled(c_.optimizer, state_.epoch), rng);
    }
    // bf16, fp16: the forward pass under autocast, the loss from fp32 logits, backward outside the autocast
    // region into the fp32 weights. fp16 scales the loss (scaler_) so that small gradients do not underflow;
    // bf16 needs no scaling: it keeps fp32's 8 exponent bits.
    auto loss = loss_(ForwardLogits(*model_, images, autocast_dtype_), targets);
    (scaler_ ? scaler_->Scale(loss / accum_) : loss / accum_).backward();
    const int64_t n = batch.labels.size(0);
    window_loss_.add_(loss.detach().to(torch::kDouble) * static_cast<double>(n));
    window_step_images_.back() += static_cast<double>(n);
  }

  bool StopWanted() const {
    return (o_.stop != nullptr && o_.stop->load()) ||
           (o_.stop_after_steps >= 0 && state_.global_step >= o_.stop_after_steps);
  }

  // Sync points: the end of an epoch, every log_every_ steps, and a stop. A single rank stops
  // at the step it is asked to; ranks of a multi-rank run agree on a stop at their sync points only (one
  // all-reduce there), every log_every_ steps or, without step lines, every kStopAgreementSteps.
  bool AtLogPoint() const {
    const int64_t every = log_every_;
    return every > 0 && state_.global_step % every == 0;
  }

  // Whether the step being taken (`step` in its epoch, not yet counted) is followed by a metric line.
  bool EndsLogWindow(int64_t step) const {
    const int64_t every = log_every_;
    return step + 1 == steps_per_epoch_ || (every > 0 && (state_.global_step + 1) % every == 0);
  }

  bool AtSyncPoint(bool stop_wanted) const {
    if (state_.step_in_epoch == steps_per_epoch_ || AtLogPoint()) return true;
    const int64_t every = log_every_;
    if (dist_->world_size() == 1) return stop_wanted;
    const bool agreed_step = o_.stop_after_steps >= 0 && state_.global_step >= o_.stop_after_steps;
    return agreed_step || state_.global_step % (every > 0 ? every : kStopAgreementSteps) == 0;
  }

  void StartWindow() {
    window_loss_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device_));
    window_step_images_.clear();
    window_start_ = Clock::now();
  }

  double WindowImages() const {
    return std::accumulate(window_step_images_.begin(), window_step_images_.end(), 0.0);
  }

  // This rank's training FLOPs of the window, each step at the densities its forward ran with (STEP's dense
  // steps before its switch as dense; docs/sparsity-method.md §10). Dynamic sparsity counts each parameter at
  // its own densities, averaged over the window's steps.
  double WindowFlops() {
    const std::vector<ParameterDensity> by_parameter = sparsity_->TakeParameterDensities();
    if (!by_parameter.empty()) return TrainingFlopsPerImageByParameter(arch_, by_parameter) * WindowImages();
    const int64_t end = state_.global_step;
    const int64_t first = end - static_cast<int64_t>(window_step_images_.size());
    const std::vector<GemmDensity> densities = sparsity_->ForwardDensities(first, end);
    double flops = 0.0, per_image = 0.0;  // The latter at the density of the step before (most are equal).
    for (size_t i = 0; i < densities.size(); ++i) {
      const GemmDensity& d = densities[i];
      if (i == 0 || d.ff != densities[i - 1].ff || d.qkv != densities[i - 1].qkv ||
          d.weight_gradient != densities[i - 1].weight_gradient)
        per_image = TrainingFlopsPerImageAt(arch_, c_.sparsity.locations, d);
      flops += per_image * window_step_images_[i];
    }
    return flops;
  }

  // Reads the window's loss (the one host read), sums it, its images and the stop flags over the ranks, and
  // books them; emits a step line at log points. Returns whether the ranks stop here.
  bool Sync(int epoch, double lr, bool stop_wanted) {
    const double loss_sum = ReadToHost(window_loss_)[0];
    const auto sums = dist_->SumAcrossRanks({loss_sum, WindowImages(), std::isfinite(loss_sum) ? 0.0 : 1.0,
                                             stop_wanted ? 1.0 : 0.0, WindowFlops()});
    if (sums[2] > 0) {
      throw TrainerError(kExitTraining, "non-finite loss in epoch " + std::to_string(epoch) +
                                            " before step " + std::to_string(state_.global_step) + " (lr " +
                                            std::to_string(lr) + ")");
    }
    const double seconds = Seconds(window_start_);
    state_.train_seconds += seconds;
    state_.epoch_seconds += seconds;
    state_.epoch_loss_sum += sums[0];
    state_.epoch_samples += sums[1];
    state_.flops += sums[4];
    log_loss_ += sums[0];
    log_images_ += sums[1];
    log_seconds_ += seconds;
    if (AtLogPoint()) {
      EmitStep(epoch, log_loss_ / log_images_, lr, log_images_ / log_seconds_);
      log_loss_ = log_images_ = log_seconds_ = 0.0;
    }
    StartWindow();
    return sums[3] > 0;
  }

  void FinishEpoch(int epoch) {
    const auto evaluate = [&] {
      return Evaluate(*model_, *data_.eval, data_.norm, c_.data.eval_batch_size, *dist_, device_,
                      autocast_dtype_, loader_threads_, epoch);
    };
    const EvalResult eval = evaluate();
    // Taken before the EMA's pass reads the same images again.
    std::vector<SplitDecodeFailures> failures = EpochDecodeFailures(epoch, eval.images);
    EvalResult ema_eval;  // The EMA in the model, under the mask rule of the epoch's last step.
    if (ema_) ema_->WithEmaWeights([&] { ema_eval = evaluate(); });
    const double loss = state_.epoch_samples > 0 ? state_.epoch_loss_sum / state_.epoch_samples : 0.0;
    const double images_per_s = state_.epoch_seconds > 0 ? state_.epoch_samples / state_.epoch_seconds : 0.0;
    state_.best_top1 = std::max(state_.best_top1, eval.top1);
    state_.last_epoch_loss = loss;
    state_.last_top1 = eval.top1;
    state_.last_top5 = eval.top5;
    state_.last_eval_loss = eval.loss;
    state_.last_ema_top1 = ema_eval.top1;
    state_.last_ema_top5 = ema_eval.top5;
    state_.last_ema_eval_loss = ema_eval.loss;
    // Every rank's rate follows the same top-1 (plateau; train.py's scheduler.step(epoch + 1, metric)), after
    // the epoch's line has shown the rate it trained with.
    const double trained_lr = schedule_->At(epoch, std::max<int64_t>(state_.global_step - 1, 0));
    // With EMA, train.py's eval_metrics are the EMA's (the plateau rule follows them).
    schedule_->EndEpoch(epoch, ema_ ? ema_eval.top1 : eval.top1);
    if (dist_->is_root()) {
      MetricLine line(contract::kKindEpoch);
      line.Add(contract::kEpochKey, epoch)
          .Add(contract::kStepKey, state_.global_step)
          .Add(contract::kLoss, loss);
      line.Add(contract::kEvalLoss, eval.loss)
          .Add(contract::kTop1, eval.top1)
          .Add(contract::kTop5, eval.top5);
      if (ema_) AddEmaFields(ema_eval.loss, ema_eval.top1, ema_eval.top5, line);
      line.Add(contract::kLearningRate, trained_lr);
      line.Add(contract::kImagesPerSecond, images_per_s).Add(contract::kFlops, state_.flops);
      line.Add(contract::kPrecisionLabel, c_.resources.precision);
      AddDeviceFields(line);
      AddLossScalerFields(line);
      AddSparsityFields(sparsity_->Report(state_.global_step, /*per_layer=*/true), line);
      if (diagnostics_) AddDiagnosticsFields(diagnostics_->Read(state_.global_step), line);
      AddSemiStructuredFields(semi_structured_.get(), line);
      if (!failures.empty()) {
        line.Add(contract::kDecodeFailures, failures[0].count);
        line.Add(contract::kEvalDecodeFailures, failures[1].count);
      }
      EmitMetric(*o_.metrics, line);
    }
    Log() << "epoch " << epoch << ": loss " << loss << ", top-1 " << eval.top1 << ", top-5 " << eval.top5
          << (ema_ ? ", EMA top-1 " + std::to_string(ema_eval.top1) : "") << ", " << images_per_s
          << " images/s\n";
    const absl::Status within = CheckDecodeFailures(failures, *dist_);
    if (!within.ok()) throw TrainerError(kExitData, std::string(within.message()));
    state_.epoch = epoch + 1;
    state_.step_in_epoch = 0;
    state_.epoch_loss_sum = state_.epoch_samples = state_.epoch_seconds = 0.0;
    Save();
  }

  // Plateau's rate follows the top-1s of the epochs before the checkpoint: a resume continues from them.
  void LoadSchedulerState() {
    try {
      schedule_->LoadState(state_.lr_scheduler);
    } catch (const std::invalid_argument& e) {
      throw TrainerError(kExitTraining, std::string("resuming the learning-rate schedule: ") + e.what());
    }
  }

  // Stored images: the training and evaluation images of `epoch` that could not be decoded, summed over ranks
  // (a collective at every epoch's end); none for other datasets. Every batch of `epoch` was built before its
  // last step and its evaluation (`eval_images` over all ranks) is done: each rank's failures are all in.
  std::vector<SplitDecodeFailures> EpochDecodeFailures(int epoch, int64_t eval_images) {
    if (!data_.train_failures) return {};
    const int64_t train_images = steps_per_epoch_ * accum_ * loader_->local_batch() * dist_->world_size();
    const auto split = [epoch](const char* what, const DecodeFailureLog& log, int64_t images) {
      return SplitDecodeFailures{what, epoch, log.Count(epoch), images, log.Failures(epoch)};
    };
    std::vector<SplitDecodeFailures> splits = {split("training images", *data_.train_failures, train_images),
                                               split("evaluation images", *data_.eval_failures, eval_images)};
    SumDecodeFailures(splits, *dist_);
    return splits;
  }

  // The canonical spec beside the checkpoints; a disk that refuses it is a storage error naming the file.
  void WriteSpecFile() {
    const absl::Status written =
        WriteFileAtomically(o_.out_dir + "/" + contract::kSpecFileName, CanonicalYaml(c_) + "\n");
    if (!written.ok()) {
      throw TrainerError(kExitStorage, "cannot write the run's spec: " + std::string(written.message()));
    }
  }

  void Save() {
    // A collective: every rank reaches Save() at the same step boundary (epoch end, or an agreed stop).
    if (dist_->world_size() > 1) state_.rank_rngs = dist_->AllGatherBytes(CpuRngState());
    if (scaler_) {
      state_.loss_scaler = scaler_->State();
      update_->SyncHostSteps();  // Steps skipped on the device left the host counts ahead.
    }
    state_.lr_scheduler = schedule_->State();
    if (!dist_->is_root()) return;
    if (ema_) state_.ema = ema_->StateDict();
    try {
      SaveCheckpoint(o_.out_dir, *model_, *optimizer_, state_, sparsity_->StateDict());
    } catch (const TrainerError&) {
      throw;  // A storage error, which names the file and the OS error.
    } catch (const std::exception& e) {
      throw TrainerError(kExitTraining, std::string("writing the checkpoint failed: ") + e.what());
    }
  }

  void EmitStep(int epoch, double loss, double lr, double images_per_s) {
    if (!dist_->is_root()) return;
    MetricLine line(contract::kKindStep);
    line.Add(contract::kEpochKey, epoch)
        .Add(contract::kStepKey, state_.global_step)
        .Add(contract::kLoss, loss);
    line.Add(contract::kLearningRate, lr);
    line.Add(contract::kImagesPerSecond, images_per_s).Add(contract::kFlops, state_.flops);
    AddLossScalerFields(line);
    AddSparsityFields(sparsity_->Report(state_.global_step, /*per_layer=*/false), line);
    if (diagnostics_) AddDiagnosticsFields(diagnostics_->Read(state_.global_step), line);
    EmitMetric(*o_.metrics, line);
  }

  // Progress whatever log_every_steps says (contract::kKindProgress): the step count the loop has on the
  // host, no device read; a step line just emitted says as much.
  void EmitProgressIfDue(int epoch) {
    if (!dist_->is_root()) return;
    if (AtLogPoint()) {
      progress_.Reset();
      return;
    }
    if (!progress_.Due()) return;
    MetricLine line(contract::kKindProgress);
    line.Add(contract::kEpochKey, epoch).Add(contract::kStepKey, state_.global_step);
    EmitMetric(*o_.metrics, line);
  }

  // After the last epoch, the model as `nmtrain --export` writes it: every sparse layer hard-masked at its
  // target N:M (for MDGF with D(end) > 0 that removes the leak the last evaluation still had), on the
  // trained weights and on the EMA's; the trained weights are put back. A collective, as every evaluation. A
  // dense run's deployable model is its trained one; dynamic sparsity has none yet (docs/interop.md).
  void EvaluateDeployable() {
    if (c_.sparsity.IsDynamic()) return;
    bool masked = false;
    const auto evaluate = [&](std::optional<double>& top1, double trained_top1) {
      masked = sparsity_->MaskWeightsAtTarget();
      top1 = !masked ? trained_top1
                     : Evaluate(*model_, *data_.eval, data_.norm, c_.data.eval_batch_size, *dist_, device_,
                                autocast_dtype_, loader_threads_, std::max<int64_t>(epochs_ - 1, 0))
                           .top1;
    };
    if (ema_) ema_->WithEmaWeights([&] { evaluate(ema_deploy_top1_, state_.last_ema_top1); });
    std::vector<torch::Tensor> trained;
    torch::NoGradGuard no_grad;
    for (const torch::Tensor& p : model_->parameters()) trained.push_back(p.detach().clone());
    evaluate(deploy_top1_, state_.last_top1);
    size_t i = 0;
    for (const torch::Tensor& p : model_->parameters()) p.detach().copy_(trained[i++]);
    if (!masked) return;
    Log() << "deployable model (sparse layers hard-masked at their target N:M, as nmtrain --export writes "
             "it): top-1 "
          << *deploy_top1_ << " (trained weights " << state_.last_top1 << ")"
          << (ema_deploy_top1_ ? ", EMA " + std::to_string(*ema_deploy_top1_) : "") << "\n";
  }

  void EmitFinal() {
    if (!dist_->is_root()) return;
    MetricLine line(contract::kKindFinal);
    line.Add(contract::kTop1, state_.last_top1).Add(contract::kTop5, state_.last_top5);
    line.Add(contract::kLoss, state_.last_epoch_loss);
    line.Add(contract::kEvalLoss, state_.last_eval_loss).Add(contract::kBestTop1, state_.best_top1);
    if (ema_) AddEmaFields(state_.last_ema_eval_loss, state_.last_ema_top1, state_.last_ema_top5, line);
    if (deploy_top1_) line.Add(contract::kDeployTop1, *deploy_top1_);
    if (ema_deploy_top1_) line.Add(contract::kEmaDeployTop1, *ema_deploy_top1_);
    line.Add(contract::kEpochs, epochs_);
    line.Add(contract::kStepKey, state_.global_step)
        .Add(contract::kTrainSeconds, state_.train_seconds)
        .Add(contract::kFlops, state_.flops)
        .Add(contract::kParams, static_cast<double>(CountParameters(*model_)))
        .Add(contract::kInferenceFlops,
             ForwardFlopsAt(arch_, c_.sparsity.locations, FinalDensity(c_.sparsity)))
        .Add(contract::kPrecisionLabel, c_.resources.precision);
    AddDeviceFields(line);
    AddLossScalerFields(line);
    EmitMetric(*o_.metrics, line);
    // Beside the checkpoint, for the export's model card; a disk that refuses it is a storage error.
    const absl::Status written =
        WriteFileAtomically(o_.out_dir + "/" + contract::kFinalMetricsFile, line.ToJson() + "\n");
    if (!written.ok()) {
      throw TrainerError(kExitStorage,
                         "cannot write the run's final metrics: " + std::string(written.message()));
    }
  }

  static void AddEmaFields(double loss, double top1, double top5, MetricLine& line) {
    line.Add(contract::kEmaEvalLoss, loss).Add(contract::kEmaTop1, top1).Add(contract::kEmaTop5, top5);
  }

  // fp16: skipped steps and the scale, in one read (the lines are written at sync points only).
  void AddLossScalerFields(MetricLine& line) const {
    if (!scaler_) return;
    const std::vector<double> v = ReadToHost(torch::cat({scaler_->skipped_steps(), scaler_->scale()}));
    line.Add(contract::kSkippedSteps, v[0]).Add(contract::kLossScale, v[1]);
  }

  std::string PrecisionText() const {
    if (autocast_dtype_ == at::kBFloat16) return "bf16 autocast (fp32 weights, optimizer state and loss)";
    if (autocast_dtype_ == at::kHalf) {
      return "fp16 autocast with dynamic loss scaling (fp32 weights, optimizer state and loss)";
    }
    return scaler_ ? "fp32 with loss scaling" : "fp32";
  }

  void AddDeviceFields(MetricLine& line) const {
    line.Add(contract::kDeviceLabel, device_label_).Add(contract::kDevicesLabel, devices_label_);
    line.Add(contract::kBlasLabel, blas_.library)
        .Add(contract::kBlasCoreLabel, blas_.core)
        .Add(contract::kCpuIsaLabel, blas_.cpu_isa);
  }

  const ExperimentConfig& c_;
  const TrainerOptions& o_;
  std::ostream& log_;
  const HoldPoint hold_{o_.test, [this] { return StopWanted(); },
                        [this]() -> std::ostream& { return Log(); }};
  ModelArch arch_;
  const c10::ScalarType autocast_dtype_;  // Of the forward passes: bf16, fp16, or Undefined (fp32).
  const TrainLoss loss_;                  // timm train.py's choice of training loss.
  const MixupOptions mixup_;              // Used when loss_ takes dense (mixed) targets.
  torch::Device device_ = torch::kCPU;
  StepSyncDebug sync_debug_;  // NMTRAIN_SYNC_DEBUG=error: the host-sync guard over each step.
  std::unique_ptr<Distributed> dist_;
  std::string device_label_;   // This rank's device, as the metric lines show it.
  std::string devices_label_;  // Every rank's, in rank order.
  const BlasFacts blas_ = InspectBlas();
  std::string rank_prefix_;
  RunData data_;
  std::unique_ptr<TrainLoader> loader_;
  std::vector<double> lr_scales_;  // Per optimizer group (layer-wise lr decay; all 1 without).
  int loader_threads_ = 0;
  std::unique_ptr<PrefetchLoader> prefetch_;
  std::unique_ptr<DeviceTransfer> transfer_;
  // The window since the last sync point: its loss sum stays on the device until the sync reads it.
  torch::Tensor window_loss_;
  std::vector<double> window_step_images_;  // This rank's images, per optimizer step of the window.
  Clock::time_point window_start_;
  double log_loss_ = 0.0, log_images_ = 0.0, log_seconds_ = 0.0;  // Since the last step line, all ranks.
  ProgressTicker progress_{contract::kProgressIntervalSeconds};
  int accum_ = 1;
  int64_t steps_per_epoch_ = 0;
  std::shared_ptr<ClassifierImpl> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<OptimizerUpdate> update_;  // AdamW's fused on a GPU (LibTorch 2.4+).
  std::unique_ptr<SparsityMethod> sparsity_;
  std::unique_ptr<SparsityDiagnostics> diagnostics_;  // Root; null when schedule.sparsity_diagnostics off.
  std::unique_ptr<SemiStructuredLayers> semi_structured_;  // After sparsity_: detaches before the model goes.
  std::unique_ptr<LrScheduler> schedule_;
  int64_t epochs_ = 0;     // Trained, cooldown included (LrScheduler::TrainedEpochs).
  int64_t log_every_ = 0;  // Steps between step lines (ScheduleConfig::LogEverySteps); 0: none.
  std::vector<torch::Tensor> params_;
  std::unique_ptr<GradientAverager> averager_;  // Bucketed all-reduce overlapped with backward.
  std::unique_ptr<ModelEma> ema_;               // model.ema only.
  std::unique_ptr<LossScaler> scaler_;          // fp16 (or TrainerTestHooks::loss_scaling); else null.
  std::unique_ptr<OptimizerStep> step_;
  TrainState state_;
  std::optional<double> deploy_top1_, ema_deploy_top1_;  // EvaluateDeployable's, for the final line.
};

}  // namespace

int RunTraining(const ExperimentConfig& config, const TrainerOptions& options) {
  if (options.out_dir.empty()) throw TrainerError(kExitUsage, "--out is required");
  Run run(config, options);
  return run.Train();
}

int DescribeRun(const ExperimentConfig& config, std::ostream& out) {
  const ModelArch arch = ResolveArch(config);
  int64_t steps_per_epoch = 1;
  std::string data_error;
  try {
    RunData data = LoadData(config, arch);
    // The loader's count (repeated augmentation changes it) on the spec's ranks; a validated spec's batch
    // divides evenly over them.
    const TrainLoader loader(data.train.get(), config.data.batch_size, 0,
                             std::max(1, Ranks(config.resources)), config.seed, AugmentOptions{}, data.norm,
                             config.data.aug_repeats);
    steps_per_epoch =
        std::max<int64_t>(1, loader.steps_per_epoch() / std::max(1, config.optimizer.grad_accum_steps));
    out << "data " << config.data.dataset << ": " << data.train->size() << " training / " << data.eval->size()
        << " evaluation images, " << steps_per_epoch << " optimizer steps per epoch\n";
  } catch (const TrainerError& e) {
    data_error = e.what();
    out << "data " << config.data.dataset << ": NOT USABLE: " << data_error
        << " (N:M stages below assume 1 step per epoch)\n";
  }
  auto model = CreateModel(arch);
  const int64_t epochs =
      MakeLrScheduler(config.schedule, config.optimizer.lr, steps_per_epoch)->TrainedEpochs();
  auto sparsity = MakeSparsity(config, epochs, steps_per_epoch, *model, nullptr);
  out << "model " << arch.name << ": " << CountParameters(*model) << " parameters, "
      << ForwardFlops(arch) / 1e9 << " GFLOPs forward per image, input " << arch.in_chans << "x"
      << arch.img_size << "x" << arch.img_size << ", " << arch.num_classes << " classes\n";
  out << "precision " << config.resources.precision
      << (config.resources.precision == "bf16"
              ? ": forward passes under bf16 autocast; weights, optimizer state, masks and loss in fp32\n"
          : config.resources.precision == "fp16"
              ? ": forward passes under fp16 autocast with dynamic loss scaling (GradScaler's); weights, "
                "optimizer state, masks and loss in fp32\n"
              : ": fp32 throughout\n");
  if (config.model.ema) {
    out << "model EMA: timm's ModelEmaV2 of the dense weights, decay " << config.model.ema_decay
        << ", evaluated after every epoch under the run's mask rule\n";
  }
  out << sparsity->Describe(epochs, steps_per_epoch);
  auto semi = ChooseSemiStructuredLayers(config.semi_structured, config.sparsity, arch);
  out << (semi.ok() ? FormatSemiStructuredChoices(config.semi_structured, *semi)
                    : "semi-structured layers: " + std::string(semi.status().message()) + "\n");
  return data_error.empty() ? kExitOk : kExitData;
}

}  // namespace nmsparse
