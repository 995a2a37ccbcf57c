#!/usr/bin/env bash
# End to end: nmtrain on one GPU, ViT-B/16 and ViT-L/16 at batch 256, bf16, SR-STE 2:4 on the MLP (FF), with
# the MLP linears as semi-structured 2:4 linears (docs/accelerated-2-4.md) under accelerate off (masked dense,
# the baseline), auto and force, exact and transposable masks; plus the plain dense model. Prints images/s
# (median of ROUNDS; each the steady rate of the step lines after the first WARMUP steps) and the ratio to the
# masked dense run, and each layer's decision from the epoch line.
#
#   NMTRAIN=build/cuda/nmtrain bench/gpu/semi_structured_e2e.sh     # on a GPU node (docs/gpu.md)
# Environment: NMTRAIN, ROUNDS (3), STEPS (30 timed steps), WARMUP (10), BATCH (256), MODELS (both), MASKS
# (exact transposable), CACHE (a fresh timing file per run of this script, so that `auto` times on this GPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/bench_lib.sh
nmtrain=${NMTRAIN:-build/cuda/nmtrain}
rounds=${ROUNDS:-3}
steps=${STEPS:-30}
warmup=${WARMUP:-10}
batch=${BATCH:-256}
models=${MODELS:-vit_base_patch16_224 vit_large_patch16_224}
masks=${MASKS:-exact transposable}
[[ -x "$nmtrain" ]] || { echo "no nmtrain at $nmtrain (set NMTRAIN; docs/gpu.md builds one)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache=${CACHE:-$work/timings.tsv}
srste='{sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FF}'

# rate MODEL SPARSITY SEMI: images/s of the epoch line, median over the rounds; the last run's line is kept.
rate() {
  local rates=()
  cat > "$work/spec.yaml" <<YAML
name: semi-structured-e2e
seed: 0
model: {name: $1}
data: {dataset: synthetic, synthetic_size: $((batch * (steps + warmup))), eval_subset: $batch, batch_size: $batch}
optimizer: {lr: 0.001, weight_decay: 0.05}
schedule: {epochs: 1, warmup_epochs: 0, log_every_steps: $warmup}
resources: {precision: bf16, cpu_threads: 4}
sparsity: $2
semi_structured: $3
YAML
  for _ in $(seq "$rounds"); do
    rm -rf "$work/out"
    "$nmtrain" --spec "$work/spec.yaml" --out "$work/out" --device cuda > "$work/metrics" 2> "$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    rates+=("$(steady_rate "$warmup" < "$work/metrics")")
  done
  printf '%s\n' "${rates[@]}" | median
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for model in $models; do
  dense=$(rate "$model" '{sparsity_type: DENSE}' '{}')
  base=$(rate "$model" "$srste" "{layers: 'blocks.*.mlp.*', accelerate: off, decision_cache: $cache}")
  echo "$model batch $batch: dense $dense images/s; SR-STE 2:4 FF masked dense $base images/s"
  for mask in $masks; do
    for accel in auto force; do
      r=$(rate "$model" "$srste" "{layers: 'blocks.*.mlp.*', accelerate: $accel, mask: $mask, decision_cache: $cache}")
      echo "  $accel $mask: $r images/s, $(awk -v a="$r" -v b="$base" 'BEGIN {printf "%.3f", a / b}')x masked dense"
      grep '"kind":"epoch"' "$work/metrics" | grep -o '"semi_structured/blocks\.0\.mlp\.fc[12]":"[^"]*"' |
        sed 's/^/    /'
    done
  done
done
