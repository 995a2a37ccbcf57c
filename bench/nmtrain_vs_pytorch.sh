#!/usr/bin/env bash
# Training throughput of nmtrain vs PyTorch from Python on the same model and recipe, in one run:
# vit_micro_patch4_28 on Fashion-MNIST, batch 128, AdamW, label smoothing 0.1, dense, 1 intra-op thread each,
# the same number of images. The two alternate for ROUNDS rounds (so a change in the machine's load hits both);
# prints every round and the median of the per-round ratios (target >= 1.25).
# Usage: bench/nmtrain_vs_pytorch.sh [IMAGES] [THREADS] [ROUNDS]
#        (needs bazel-bin/worker/trainer/nmtrain or $NMTRAIN; NMSPARSE_FUSED_KERNELS=0 measures without the
#        fused CPU kernels)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_lib.sh
# The baseline is PyTorch from Python (Debian's python3-torch, over the same LibTorch 1.13): installed if missing.
NMSPARSE_BENCH=1 bash tools/bootstrap.sh >&2
images=${1:-4096}
threads=${2:-1}
rounds=${3:-5}
nmtrain=${NMTRAIN:-bazel-bin/worker/trainer/nmtrain}
[[ -x "$nmtrain" ]] || bazel build //worker/trainer:nmtrain >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/spec.yaml" <<YAML
name: bench-micro-vit
seed: 0
model: {name: vit_micro_patch4_28}
data: {dataset: fashion_mnist, train_subset: $images, eval_subset: 128, batch_size: 128}
optimizer: {lr: 0.002, weight_decay: 0.05, label_smoothing: 0.1}
schedule: {epochs: 1}
YAML
echo "vit_micro_patch4_28, Fashion-MNIST, batch 128, $images images, $threads thread(s), load $(cut -d' ' -f1 /proc/loadavg)"
ratios=()
for round in $(seq "$rounds"); do
  rm -rf "$work/out"
  ours=$("$nmtrain" --spec "$work/spec.yaml" --out "$work/out" --threads "$threads" 2>/dev/null |
         epoch_field images_per_s)
  theirs=$(/usr/bin/python3 bench/vit_pytorch.py --images "$images" --threads "$threads" |
           sed -E 's/.*"images_per_s": ([0-9.e+]+).*/\1/')
  ratio=$(/usr/bin/python3 -c "print(f'{$ours / $theirs:.2f}')")
  ratios+=("$ratio")
  printf 'round %d: nmtrain %7.1f images/s, PyTorch (Python) %7.1f images/s, ratio %sx\n' \
    "$round" "$ours" "$theirs" "$ratio"
done
median_ratio=$(printf '%s\n' "${ratios[@]}" | median)
echo "median ratio:     ${median_ratio}x (target >= 1.25x)"
