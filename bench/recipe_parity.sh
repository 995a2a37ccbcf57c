#!/usr/bin/env bash
# The paper's training recipe in nmtrain against timm's own train.py (issue 24): the same small ViT
# (vit_micro_patch4_28: width 64, depth 4, 4 heads, patch 4, 28x28x1, 10 classes; in timm vit_tiny_patch16_224
# with those model kwargs) on Fashion-MNIST (all 60,000 training and 10,000 test images, from the IDX files
# tools/main_job.sh uses) with the recipe of the reference configs: BCE loss on Mixup (0.8) / CutMix (1.0)
# targets switched per batch with p 0.5 and label smoothing 0.1 folded in, AdamW (lr 1e-3, wd 0.05, clip 1.0),
# timm's cosine with 1 warm-up epoch and 1 cooldown epoch, and a model EMA (decay 0.998), fp32, dense.
# RandAugment does not apply to 1-channel images (timm's rand-* ops expect RGB), and nmtrain's Fashion-MNIST
# loader has no RandomResizedCrop, so both sides train without spatial augmentation (timm: --no-aug, whose
# transform at 28x28 with crop_pct 1 is ToTensor + Normalize; nmtrain: hflip 0, no padding) and use the same
# normalisation (mean 0.2860, std 0.3530). Prints top-1 (raw and EMA) per epoch for each seed and side.
#
# Usage: bench/recipe_parity.sh [EPOCHS] [SEEDS] [THREADS]     (defaults: 10, "0 1", 1)
#   EPOCHS: the cosine's epochs; each side trains EPOCHS + 1 (cooldown).
#   TIMM_TRAIN_PY: timm's train.py, which is in neither the wheel nor the sdist of timm 1.0.31 on PyPI: the one
#   measured is huggingface/pytorch-image-models' train.py at commit 2aabaef039d918d453b58714ab84562609981112,
#   run through bench/recipe_parity/timm_train_shim.py (its only change: the device; see there). Without it
#   only nmtrain's side runs. That train.py does not pass --img-size to create_model, so the model kwargs
#   carry img_size=28 too.
#   SIDES: which sides to run (default "nmtrain timm"); nmtrain's side is deterministic for a seed and thread
#   count, so one side can be rerun alone.
#   PYTHON: the venv with timm 1.0.31 and torch (default ~/.cache/nmsparse/torch-2.11.0/bin/python).
#   NMTRAIN (default bazel-bin/worker/trainer/nmtrain), FMNIST (default /usr/share/datasets/fashion-mnist).
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-10}
seeds=${2:-0 1}
threads=${3:-1}
python=${PYTHON:-$HOME/.cache/nmsparse/torch-2.11.0/bin/python}
nmtrain=${NMTRAIN:-bazel-bin/worker/trainer/nmtrain}
fmnist=${FMNIST:-/usr/share/datasets/fashion-mnist}
sides=${SIDES:-nmtrain timm}
if [[ " $sides " == *" nmtrain "* && ! -x "$nmtrain" ]]; then bazel build //worker/trainer:nmtrain >&2; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "recipe parity: vit_micro_patch4_28, Fashion-MNIST 60k/10k, $epochs + 1 cooldown epochs, seeds $seeds," \
  "$threads thread(s), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"

nmtrain_side() {  # nmtrain_side SEED: "epoch top1 ema_top1" per epoch
  cat >"$work/spec.yaml" <<YAML
name: recipe-parity
seed: $1
model: {name: vit_micro_patch4_28, ema: true, ema_decay: 0.998}
data: {dataset: fashion_mnist, path: $fmnist, batch_size: 128, eval_batch_size: 256, hflip: 0.0,
       random_crop_padding: 0}
optimizer: {name: adamw, lr: 0.001, weight_decay: 0.05, clip_grad_norm: 1.0, label_smoothing: 0.1,
            mixup_alpha: 0.8, cutmix_alpha: 1.0, mixup_switch_prob: 0.5, bce_loss: true}
schedule: {sched: cosine, epochs: $epochs, warmup_epochs: 1, warmup_lr: 0.00001, min_lr: 0.00001,
           cooldown_epochs: 1, log_every_steps: 0}
resources: {gpus: 1, cpu_threads: $threads}
sparsity: {sparsity_type: DENSE}
YAML
  rm -rf "$work/nmtrain-out"
  "$nmtrain" --spec "$work/spec.yaml" --out "$work/nmtrain-out" --threads "$threads" 2>"$work/nmtrain.log" |
    grep '"kind":"epoch"' | "$python" -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(d["epoch"], round(100 * d["top1"], 2), round(100 * d["ema_top1"], 2))'
}

timm_side() {  # timm_side SEED: "epoch top1 ema_top1" per epoch, from train.py's log of each evaluation
  if [[ ! -d "$work/torchvision/FashionMNIST/raw" ]]; then  # torchvision reads the IDX files unzipped
    mkdir -p "$work/torchvision/FashionMNIST/raw"
    for f in "$fmnist"/*.gz; do gunzip -c "$f" >"$work/torchvision/FashionMNIST/raw/$(basename "${f%.gz}")"; done
  fi
  rm -rf "$work/timm-out"
  OMP_NUM_THREADS=$threads "$python" bench/recipe_parity/timm_train_shim.py --train-py "$TIMM_TRAIN_PY" \
    --device cpu --data-dir "$work/torchvision" \
    --dataset torch/fashion_mnist --train-split train --val-split test --no-prefetcher \
    --workers 1 --seed "$1" --model vit_tiny_patch16_224 --img-size 28 --in-chans 1 --num-classes 10 \
    --model-kwargs patch_size=4 embed_dim=64 depth=4 num_heads=4 img_size=28 --no-aug --mean 0.2860 \
    --std 0.3530 --crop-pct 1.0 -b 128 -vb 256 --opt adamw --lr 0.001 --weight-decay 0.05 --clip-grad 1.0 \
    --sched cosine --epochs "$epochs" --warmup-epochs 1 --warmup-lr 0.00001 --min-lr 0.00001 \
    --cooldown-epochs 1 --mixup 0.8 --cutmix 1.0 --mixup-switch-prob 0.5 --smoothing 0.1 --bce-loss \
    --model-ema --model-ema-decay 0.998 --drop-path 0 --log-interval 100000 --output "$work/timm-out" \
    --experiment run >"$work/timm.log" 2>&1 || { tail -20 "$work/timm.log" >&2; return 1; }
  # summary.csv holds only the EMA's evaluation when there is one; the log has both, the last batch of each
  # evaluation carrying the running average ("Test: [ 39/39] ... Acc@1: x (AVG)", then "Test (EMA): ...").
  "$python" -c '
import re, sys
raw, ema = [], []
for line in open(sys.argv[1]):
    m = re.search(r"Test( \(EMA\))?: \[\s*(\d+)/(\d+)\].*Acc@1:\s*\S+\s*\(\s*([\d.]+)\)", line)
    if m and m.group(2) == m.group(3):
        (ema if m.group(1) else raw).append(float(m.group(4)))
for epoch, (r, e) in enumerate(zip(raw, ema)):
    print(epoch, f"{r:.2f}", f"{e:.2f}")' "$work/timm.log"
}

for seed in $seeds; do
  if [[ " $sides " == *" nmtrain "* ]]; then
    start=$SECONDS
    echo "nmtrain, seed $seed (epoch top1 ema_top1):"
    nmtrain_side "$seed"
    echo "  ($((SECONDS - start)) s)"
  fi
  if [[ " $sides " == *" timm "* && -n "${TIMM_TRAIN_PY:-}" ]]; then
    start=$SECONDS
    echo "timm train.py, seed $seed (epoch top1 ema_top1):"
    timm_side "$seed"
    echo "  ($((SECONDS - start)) s)"
  fi
done
