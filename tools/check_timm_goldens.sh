#!/usr/bin/env bash
# Regenerates each golden file that nmsparse's tests compare with timm and fails when one differs from the
# committed file. timm comes from PyPI (NMSPARSE_TIMM_VERSION) into the LibTorch 2.x venv of
# tools/libtorch2_env.sh, with that venv's torch pinned so that pip never swaps the LibTorch the CMake build uses.
#   models_test:       create_model(name, **model_kwargs) parameter names, shapes, counts (issue 28)
#   model_catalog_test: create_model(name) of each timm-named catalogue entry (issue 24)
#   loss_test:         BCE / label-smoothing / soft-target losses, Mixup and CutMix (issue 24)
#   lr_scheduler_test: create_scheduler_v2's learning rate at every update (issue 24)
#   jpeg_decoder_test: Pillow's decode of JPEGs it made, convert('RGB') as timm's loader (issue 23)
#   rand_augment_test: each RandAugment op's output and level argument (issue 23)
#   model_ema_test:    ModelEmaV2 on a fixed sequence of weights (issue 24)
#   lion_test:         timm.optim.Lion (foreach and per-tensor) on a fixed sequence of gradients (issue 42)
#   repeat_aug_test:   RepeatAugSampler's per-rank order for a given permutation (issue 24)
#   layer_decay_test:  param_groups_layer_decay's groups, lr_scale and weight decay per parameter (issue 24)
#   models_test:       SwinV2 fine-tunes' forward (pretrained_window_sizes) for fixed weights (issue 24)
#   models_test:       a ViT that timm saved with save_for_hf and torch.save (plain, train.py's wrapping) and a SwinV2
#                      torch.save'd in {'model': ...}, loaded as model.initial_checkpoint: their logits (issue 39)
#   timm_import_test:  a SwinV2 that timm saved with save_for_hf, loaded with 3, 1 and 4 input channels
#                      (adapt_input_conv in timm's load_pretrained): the stem's weight and the logits (issue 39)
#   model_export_test: a run nmtrain trained, exported by nmtrain --export, loaded by timm (create_model with
#                      pretrained_cfg_overlay's file): exactly N:M where sparsity.json says, and its logits (issue 39)
#   transforms_test:   Pillow resizes, the eval transform, colour jitter, RRC and erasing draws (issue 23)
#   param_importance_test: Optuna's fANOVA importances on synthetic trials (issue 27; optuna and scikit-learn
#                      from PyPI into the same venv)
#   tfevents_test:     the other way round: TensorBoard's own reader and HParams parsers read the event file the
#                      test pins (report/testdata/hparams_run.tfevents) and find the run's hparams (issue 40;
#                      tensorboard from PyPI into the same venv, which changes neither torch nor numpy)
set -euo pipefail
cd "$(dirname "$0")/.."
torch_dir=$(bash tools/libtorch2_env.sh)
python=${NMSPARSE_TORCH_PYTHON:-$(dirname "$(dirname "$(dirname "$(dirname "$torch_dir")")")")/bin/python}
timm_version=${NMSPARSE_TIMM_VERSION:-1.0.31}
if ! "$python" -c "import timm, sys; sys.exit(timm.__version__ != '$timm_version')" 2>/dev/null; then
  torch_version=$("$python" -W ignore -c 'import torch; print(torch.__version__.split("+")[0])')
  "$python" -m pip install -q --disable-pip-version-check "timm==$timm_version" "torch==$torch_version" >&2
fi

# Optuna's fANOVA importances (report/param_importance_test), pinned likewise.
optuna_version=${NMSPARSE_OPTUNA_VERSION:-5.0.0}
sklearn_version=${NMSPARSE_SKLEARN_VERSION:-1.9.1}
if ! "$python" -c "import optuna, sklearn, sys; sys.exit(optuna.__version__ != '$optuna_version' or sklearn.__version__ != '$sklearn_version')" 2>/dev/null; then
  torch_version=$("$python" -W ignore -c 'import torch; print(torch.__version__.split("+")[0])')
  "$python" -m pip install -q --disable-pip-version-check "optuna==$optuna_version" \
    "scikit-learn==$sklearn_version" "torch==$torch_version" >&2
fi

# TensorBoard's reader (report/tfevents_test's event file), pinned likewise.
tensorboard_version=${NMSPARSE_TENSORBOARD_VERSION:-2.21.0}
if ! "$python" -c "import tensorboard, sys; sys.exit(tensorboard.__version__ != '$tensorboard_version')" 2>/dev/null; then
  torch_version=$("$python" -W ignore -c 'import torch; print(torch.__version__.split("+")[0])')
  "$python" -m pip install -q --disable-pip-version-check "tensorboard==$tensorboard_version" \
    "torch==$torch_version" >&2
fi

failed=0
# check GOLDEN GENERATOR FIXES: the generator's output must equal the committed file.
check() {
  # $2 is unquoted: a generator may take arguments ("tools/timm_model_golden.py --catalog").
  # shellcheck disable=SC2086
  if diff -u "$1" <("$python" -W ignore $2) >/dev/null; then
    echo "check_timm_goldens: $1 equals its generator's output (timm $timm_version)"
  else
    echo "check_timm_goldens: timm $timm_version differs from $1 (regenerate it with $2, then fix $3)" >&2
    failed=1
  fi
}
check worker/trainer/models/testdata/timm_model_kwargs.txt tools/timm_model_golden.py worker/trainer/models/
check schemas/testdata/timm_catalog_models.txt "tools/timm_model_golden.py --catalog" schemas/model_catalog.cc
check worker/trainer/testdata/timm_loss.txt tools/timm_loss_golden.py "worker/trainer/loss/loss.cc, mixup.cc"
check worker/trainer/testdata/timm_lr_schedules.txt tools/timm_sched_golden.py worker/trainer/scheduler/lr_scheduler.cc
check worker/trainer/data/testdata/pillow_jpeg_decode.txt tools/pillow_jpeg_golden.py worker/trainer/data/jpeg_decoder.cc
check worker/trainer/data/randaugment/testdata/timm_randaugment.txt tools/timm_randaugment_golden.py worker/trainer/data/randaugment/
check worker/trainer/testdata/timm_ema.txt tools/timm_ema_golden.py worker/trainer/model_ema.cc
check worker/trainer/testdata/timm_lion.txt tools/timm_lion_golden.py worker/trainer/optim/lion.cc
check worker/trainer/data/testdata/timm_repeat_aug.txt tools/timm_repeat_aug_golden.py worker/trainer/data/repeat_aug_sampler.cc
check worker/trainer/testdata/timm_layer_decay.txt tools/timm_layer_decay_golden.py "worker/trainer/optim/layer_decay.cc, optimizer.cc"
check worker/trainer/data/transforms/testdata/timm_transforms.txt tools/timm_transforms_golden.py worker/trainer/data/transforms/
check worker/trainer/models/testdata/timm_swinv2_forward.txt tools/timm_swinv2_forward_golden.py worker/trainer/models/swin_transformer_v2.cc
check worker/trainer/models/testdata/timm_vit_import.txt tools/timm_import_golden.py worker/trainer/interop/initial_weights.cc
check worker/trainer/interop/testdata/timm_swinv2_import.txt tools/timm_swinv2_import_golden.py worker/trainer/interop/initial_weights.cc
check worker/trainer/interop/testdata/timm_export.txt tools/timm_export_golden.py worker/trainer/interop/model_export.cc
check worker/trainer/testdata/torch_grad_scaler.txt tools/torch_grad_scaler_golden.py worker/trainer/precision/loss_scaler.cc
check report/testdata/optuna_importances.txt tools/optuna_importance_golden.py report/param_importance.cc
if "$python" -W ignore tools/check_tensorboard_hparams.py; then
  echo "check_timm_goldens: tensorboard $tensorboard_version reads report/testdata/hparams_run.tfevents's hparams"
else
  echo "check_timm_goldens: tensorboard $tensorboard_version reads other hparams from report/testdata/hparams_run.tfevents (fix report/tfevents_hparams.cc)" >&2
  failed=1
fi
exit $failed
