#!/usr/bin/env bash
# nmtrain on one GPU, every figure of the GPU-speed issue in one run (median of ROUNDS rounds each):
#   - ViT-B/16 bf16 batch 64: nmtrain vs timm eager vs timm + torch.compile (same recipe, random images)
#   - ViT-Ti/16 batch 256 and SwinV2-T batch 64: nmtrain vs timm eager
#   - ViT-B/16: dense vs SR-STE 2:4 vs MDGF-Exp 1:8 (FF + QKV), as step-time ratios to dense
#   - GPU SM use (nvidia-smi dmon) during nmtrain's dense ViT-B/16 run
# nmtrain's figure is its step lines after its first WARMUP steps (as timm's skips its first 10): synthetic
# images built by its loader threads, copied and normalised on the GPU every step, as in a real run. timm's
# has its images on the GPU throughout.
#
#   NMTRAIN=build/cuda/nmtrain bench/gpu/gpu_bench.sh        # on a GPU node (docs/gpu.md)
# Environment: NMTRAIN, PYTHON (python3 with torch and timm), ROUNDS (3), STEPS (40 timed steps per figure),
# WARMUP (10 untimed steps first, both sides), MODELS_ONLY=vit_b (the ViT-B/16 figures only: node_check.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/bench_lib.sh
nmtrain=${NMTRAIN:-build/cuda/nmtrain}
python=${PYTHON:-python3}
rounds=${ROUNDS:-3}
steps=${STEPS:-40}
warmup=${WARMUP:-10}
[[ -x "$nmtrain" ]] || { echo "no nmtrain at $nmtrain (set NMTRAIN; docs/gpu.md builds one)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"; [[ -n "${dmon:-}" ]] && kill "$dmon" 2>/dev/null' EXIT

# nmtrain's images/s for MODEL BATCH SPARSITY (a YAML mapping), median over the rounds.
nmtrain_rate() {
  local model=$1 batch=$2 sparsity=$3 rates=()
  cat > "$work/spec.yaml" <<YAML
name: gpu-bench
seed: 0
model: {name: $model}
data: {dataset: synthetic, synthetic_size: $((batch * (steps + warmup))), eval_subset: $batch, batch_size: $batch}
optimizer: {lr: 0.001, weight_decay: 0.05, label_smoothing: 0.1}
schedule: {epochs: 1, warmup_epochs: 0, log_every_steps: $warmup}
resources: {precision: bf16, cpu_threads: 4}
sparsity: $sparsity
YAML
  for _ in $(seq "$rounds"); do
    rm -rf "$work/out"
    rates+=("$("$nmtrain" --spec "$work/spec.yaml" --out "$work/out" --device cuda 2>"$work/err" |
               steady_rate "$warmup")") || { cat "$work/err" >&2; exit 1; }
  done
  printf '%s\n' "${rates[@]}" | median
}

timm_rate() {  # timm_rate MODEL BATCH [--compile]
  local rates=()
  for _ in $(seq "$rounds"); do
    rates+=("$("$python" bench/gpu/timm_baseline.py --model "$1" --batch "$2" --steps "$steps" \
               --warmup "$warmup" "${@:3}" |
               sed -E 's/.*"images_per_s": ([0-9.e+]+).*/\1/')")
  done
  printf '%s\n' "${rates[@]}" | median
}

ratio() { "$python" -c "print(f'{$1 / $2:.2f}')"; }

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
dense='{sparsity_type: DENSE}'
srste='{sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FFQKV}'
mdgf='{sparsity_type: STRUCTURED_NM, decay_type: EXP, n_sparsity: 1, m_sparsity: 8, sparsity_loc: FFQKV}'

nvidia-smi dmon -s u -d 1 > "$work/dmon.txt" 2>/dev/null &
dmon=$!
vit_b=$(nmtrain_rate vit_base_patch16_224 64 "$dense")
kill "$dmon" 2>/dev/null; dmon=""
sm=$(awk '$1 ~ /^[0-9]+$/ && $2 > 0 {s += $2; n++} END {print n ? s / n : 0}' "$work/dmon.txt")
vit_b_timm=$(timm_rate vit_base_patch16_224 64)
vit_b_compiled=$(timm_rate vit_base_patch16_224 64 --compile)
vit_b_srste=$(nmtrain_rate vit_base_patch16_224 64 "$srste")

echo
printf '%-34s %10s %12s %14s %10s\n' "figure (bf16, images/s)" nmtrain "timm eager" "timm compile" "vs eager"
printf '%-34s %10.0f %12.0f %14.0f %9sx\n' "ViT-B/16, batch 64" "$vit_b" "$vit_b_timm" "$vit_b_compiled" \
  "$(ratio "$vit_b" "$vit_b_timm")"
if [[ "${MODELS_ONLY:-}" != vit_b ]]; then
  vit_ti=$(nmtrain_rate vit_tiny_patch16_224 256 "$dense")
  vit_ti_timm=$(timm_rate vit_tiny_patch16_224 256)
  swin=$(nmtrain_rate swinv2_tiny_window8_256 64 "$dense")
  swin_timm=$(timm_rate swinv2_tiny_window8_256 64)
  vit_b_mdgf=$(nmtrain_rate vit_base_patch16_224 64 "$mdgf")
  printf '%-34s %10.0f %12.0f %14s %9sx\n' "ViT-Ti/16, batch 256" "$vit_ti" "$vit_ti_timm" - \
    "$(ratio "$vit_ti" "$vit_ti_timm")"
  printf '%-34s %10.0f %12.0f %14s %9sx\n' "SwinV2-T w8 256, batch 64" "$swin" "$swin_timm" - \
    "$(ratio "$swin" "$swin_timm")"
  printf 'ViT-B/16 step time vs dense: MDGF-Exp 1:8 %sx (FF + QKV)\n' "$(ratio "$vit_b" "$vit_b_mdgf")"
fi
echo
printf 'ViT-B/16 step time vs dense: SR-STE 2:4 %sx (FF + QKV)\n' "$(ratio "$vit_b" "$vit_b_srste")"
printf 'GPU SM use during the dense ViT-B/16 runs: %.0f%%\n' "$sm"
