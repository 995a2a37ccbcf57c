#!/usr/bin/env bash
# Dynamic unstructured sparsity (docs/sparsity-method.md §7) on Fashion-MNIST with vit_micro_patch4_28: dense
# vs static 90% vs RigL 90% (sparse FF, attention and head weights by the default filter), same seed, data and
# schedule. Prints top-1 and training time per run and their ratios to the dense run measured here.
#
#   bench/dynamic_sparsity_fmnist.sh [TRAIN_SUBSET [EPOCHS [THREADS]]]   (defaults 10000, 3, 2; 0 = all 60000)
#
# Needs bazel-bin/worker/trainer/nmtrain (bazel build //worker/trainer:nmtrain). CPU: masked dense matmuls, so
# the time ratio shows the masks' overhead, not a sparse speed-up.
set -euo pipefail
cd "$(dirname "$0")/.."
SUBSET=${1:-10000}
EPOCHS=${2:-3}
THREADS=${3:-2}
NMTRAIN=bazel-bin/worker/trainer/nmtrain
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

run() {
  local name=$1 sparsity=$2
  cat > "$WORK/$name.yaml" <<SPEC
name: bench-$name
seed: 1
model: {name: vit_micro_patch4_28}
data: {dataset: fashion_mnist, train_subset: $SUBSET, eval_subset: 2000, batch_size: 128, eval_batch_size: 500}
optimizer: {lr: 0.002, weight_decay: 0.05}
schedule: {epochs: $EPOCHS, warmup_epochs: 0.5}
sparsity: $sparsity
SPEC
  "$NMTRAIN" --spec "$WORK/$name.yaml" --out "$WORK/$name" --threads "$THREADS" > "$WORK/$name.metrics" \
    2> "$WORK/$name.log"
  python3 - "$name" "$WORK/$name.metrics" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[2])]
final = [l for l in lines if l["kind"] == "final"][-1]
epoch = [l for l in lines if l["kind"] == "epoch"][-1]
sp = [v for k, v in epoch.items() if k.startswith("sparsity/") and "." in k]
mean = sum(sp) / len(sp) if sp else 0.0
print(f"{sys.argv[1]:8s} top1 {final['top1']:.4f}  train_seconds {final['train_seconds']:.1f}  "
      f"mean layer sparsity {mean:.3f} over {len(sp)} layers")
with open(sys.argv[2] + ".summary", "w") as f:
    f.write(f"{final['top1']} {final['train_seconds']}\n")
PY
}

echo "vit_micro_patch4_28, Fashion-MNIST train_subset=$SUBSET (0 = all), eval 2000, $EPOCHS epochs, $THREADS threads"
run dense '{sparsity_type: DENSE}'
run static '{algorithm: static, sparsity: 0.9}'
run rigl '{algorithm: rigl, sparsity: 0.9, update: {freq: 20}, drop_fraction: {type: cosine, start_value: 0.3, end_value: 0, end_step: 200}}'
read -r dense_top1 dense_s < "$WORK/dense.metrics.summary"
for name in static rigl; do
  read -r top1 s < "$WORK/$name.metrics.summary"
  python3 -c "print(f'$name vs dense: top1 {$top1 - $dense_top1:+.4f}, time ratio {$s / $dense_s:.2f}')"
done
