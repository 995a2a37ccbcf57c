#!/usr/bin/env bash
# Training throughput of nmtrain vs PyTorch from Python on the same model and recipe, in one run:
# vit_micro_patch4_28 on Fashion-MNIST, batch 128, AdamW, label smoothing 0.1, dense, 1 intra-op thread each,
# the same number of images. Prints both figures and the ratio (target >= 1.25).
# Usage: bench/nmtrain_vs_pytorch.sh [IMAGES] [THREADS]   (needs bazel-bin/worker/trainer/nmtrain or $NMTRAIN)
set -euo pipefail
cd "$(dirname "$0")/.."
images=${1:-4096}
threads=${2:-1}
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
ours=$("$nmtrain" --spec "$work/spec.yaml" --out "$work/out" --threads "$threads" 2>/dev/null |
       grep '"kind":"epoch"' | sed -E 's/.*"images_per_s":([0-9.e+]+).*/\1/')
theirs=$(/usr/bin/python3 bench/micro_vit_pytorch.py --images "$images" --threads "$threads" |
         sed -E 's/.*"images_per_s": ([0-9.e+]+).*/\1/')
ratio=$(/usr/bin/python3 -c "print(f'{$ours / $theirs:.2f}')")
echo "vit_micro_patch4_28, Fashion-MNIST, batch 128, $images images, $threads thread(s)"
echo "nmtrain:          $(printf '%.1f' "$ours") images/s"
echo "PyTorch (Python): $(printf '%.1f' "$theirs") images/s"
echo "ratio:            ${ratio}x"
