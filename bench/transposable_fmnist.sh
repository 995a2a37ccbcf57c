#!/usr/bin/env bash
# The accuracy cost of the transposable 2:4 mask (docs/accelerated-2-4.md) on the quick Fashion-MNIST recipe
# (bench/fmnist_recipes_sweep.yaml: vit_micro_patch4_28, 2 epochs, batch 128, SR-STE 2:4 on FF): the MLP
# linears as semi-structured linears with the engine's exact mask against the transposable mask, same seed.
# On the CPU both run the masked dense path, so the difference is the mask alone. Each mask trains once per
# seed (two trainers at a time); prints every run, then each mask's mean and standard deviation of top-1 and the
# difference of the means.
#   NMTRAIN=bazel-bin/worker/trainer/nmtrain bench/transposable_fmnist.sh [EPOCHS] [SEEDS]   (SEEDS: "0 1 2")
set -euo pipefail
cd "$(dirname "$0")/.."
nmtrain=${NMTRAIN:-bazel-bin/worker/trainer/nmtrain}
epochs=${1:-2}
seeds=${2:-0 1 2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train() {  # train MASK SEED: one run; its final metric line goes to $work/MASK-SEED.metrics.
  cat > "$work/$1-$2.yaml" <<YAML
name: transposable-fmnist
seed: $2
model: {name: vit_micro_patch4_28}
data: {dataset: fashion_mnist, batch_size: 128, random_crop_padding: 2}
optimizer: {name: adamw, lr: 0.002, weight_decay: 0.05, clip_grad_norm: 1.0}
schedule: {epochs: $epochs, warmup_epochs: 0.25, min_lr: 1.0e-5}
resources: {gpus: 1, cpu_threads: 1}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FF}
semi_structured: {layers: 'blocks.*.mlp.*', mask: $1}
YAML
  "$nmtrain" --spec "$work/$1-$2.yaml" --out "$work/out-$1-$2" > "$work/$1-$2.metrics" 2> "$work/$1-$2.err"
}
field() { grep -o "\"$1\":[0-9.e+-]*" | cut -d: -f2; }  # field NAME < metric line
echo "vit_micro_patch4_28, Fashion-MNIST, $epochs epochs, SR-STE 2:4 on the MLP linears, seeds: $seeds"
for seed in $seeds; do
  train exact "$seed" &
  train transposable "$seed" &
  wait
  for mask in exact transposable; do
    final=$(grep '"kind":"final"' "$work/$mask-$seed.metrics") || { cat "$work/$mask-$seed.err" >&2; exit 1; }
    top1=$(echo "$final" | field top1)
    echo "$top1" >> "$work/$mask.top1"
    echo "seed $seed $mask: top1 $top1, loss $(echo "$final" | field loss), train $(echo "$final" | field train_seconds) s"
  done
done
python3 - "$work" <<'PY'
import statistics, sys
top1 = {m: [float(x) for x in open(f"{sys.argv[1]}/{m}.top1")] for m in ("exact", "transposable")}
for m, xs in top1.items():
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    print(f"{m}: top1 mean {statistics.mean(xs):.4f} +- {sd:.4f} over {len(xs)} seed(s)")
print(f"transposable - exact: {statistics.mean(top1['transposable']) - statistics.mean(top1['exact']):+.4f}")
PY
