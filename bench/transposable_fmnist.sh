#!/usr/bin/env bash
# The accuracy cost of the transposable 2:4 mask (docs/accelerated-2-4.md) on the quick Fashion-MNIST recipe
# (bench/fmnist_recipes_sweep.yaml: vit_micro_patch4_28, 2 epochs, batch 128, SR-STE 2:4 on FF): the MLP
# linears as semi-structured linears with the engine's exact mask against the transposable mask, same seed.
# On the CPU both run the masked dense path, so the difference is the mask alone.
#   NMTRAIN=bazel-bin/worker/trainer/nmtrain bench/transposable_fmnist.sh [EPOCHS]
set -euo pipefail
cd "$(dirname "$0")/.."
nmtrain=${NMTRAIN:-bazel-bin/worker/trainer/nmtrain}
epochs=${1:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mask in exact transposable; do
  cat > "$work/$mask.yaml" <<YAML
name: transposable-fmnist
seed: 0
model: {name: vit_micro_patch4_28}
data: {dataset: fashion_mnist, batch_size: 128, random_crop_padding: 2}
optimizer: {name: adamw, lr: 0.002, weight_decay: 0.05, clip_grad_norm: 1.0}
schedule: {epochs: $epochs, warmup_epochs: 0.25, min_lr: 1.0e-5}
resources: {gpus: 1, cpu_threads: 1}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FF}
semi_structured: {layers: 'blocks.*.mlp.*', mask: $mask}
YAML
  "$nmtrain" --spec "$work/$mask.yaml" --out "$work/out-$mask" > "$work/$mask.metrics" 2> "$work/$mask.err" &
done
wait
for mask in exact transposable; do
  final=$(grep '"kind":"final"' "$work/$mask.metrics") || { cat "$work/$mask.err" >&2; exit 1; }
  echo "$mask: top1 $(echo "$final" | grep -o '"top1":[0-9.]*' | cut -d: -f2)," \
       "loss $(echo "$final" | grep -o '"loss":[0-9.]*' | cut -d: -f2)," \
       "train $(echo "$final" | grep -o '"train_seconds":[0-9.]*' | cut -d: -f2) s"
done
