#!/usr/bin/env bash
# Training throughput of nmtrain vs PyTorch from Python on the same ViT and recipe, on a GPU (the issue's
# "ViT-B/16 bf16 images/s" benchmark): synthetic 224x224 images, AdamW, label smoothing 0.1, bf16 autocast,
# alternating for ROUNDS rounds; prints every round and the median ratio. nmtrain's figure is its epoch line
# (synthetic data made and copied to the GPU every step included); PyTorch's has the images on the GPU first.
#
#   NMTRAIN=build/cuda/nmtrain bench/vit_gpu_vs_pytorch.sh            # on a GPU node (docs/gpu.md)
#   DEVICE=cpu MODEL=vit_tiny_patch16_224 PRECISION=fp32 IMAGES=48 BATCH=8 ROUNDS=1 bench/vit_gpu_vs_pytorch.sh
#                                                                    # the script's own smoke run, on CPU
# Environment: MODEL (vit_base_patch16_224), DEVICE (cuda), PRECISION (bf16 | fp32), IMAGES (4096), BATCH (64),
# ROUNDS (3), THREADS (CPU intra-op threads of each, 1), PYTHON (python3: the interpreter whose torch is the
# baseline), NMTRAIN.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_lib.sh
model=${MODEL:-vit_base_patch16_224}
device=${DEVICE:-cuda}
precision=${PRECISION:-bf16}
images=${IMAGES:-4096}
batch=${BATCH:-64}
rounds=${ROUNDS:-3}
threads=${THREADS:-1}
python=${PYTHON:-python3}
nmtrain=${NMTRAIN:-bazel-bin/worker/trainer/nmtrain}
[[ -x "$nmtrain" ]] || { echo "no nmtrain at $nmtrain (set NMTRAIN)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/spec.yaml" <<YAML
name: bench-vit-gpu
seed: 0
model: {name: $model}
data: {dataset: synthetic, synthetic_size: $images, eval_subset: $batch, batch_size: $batch}
optimizer: {lr: 0.001, weight_decay: 0.05, label_smoothing: 0.1}
schedule: {epochs: 1, warmup_epochs: 0}
resources: {precision: $precision}
YAML
bf16_flag=()
[[ "$precision" == bf16 ]] && bf16_flag=(--bf16)
echo "$model, synthetic ${images} images, batch $batch, $precision, device $device"
ratios=()
for round in $(seq "$rounds"); do
  rm -rf "$work/out"
  ours=$("$nmtrain" --spec "$work/spec.yaml" --out "$work/out" --device "$device" --threads "$threads" \
           2>"$work/nmtrain.err" | epoch_field images_per_s) ||
    { cat "$work/nmtrain.err" >&2; exit 1; }
  theirs=$("$python" bench/vit_pytorch.py --model "$model" --synthetic --images "$images" --batch "$batch" \
             --device "$device" "${bf16_flag[@]}" --threads "$threads" |
           sed -E 's/.*"images_per_s": ([0-9.e+]+).*/\1/')
  ratio=$("$python" -c "print(f'{$ours / $theirs:.2f}')")
  ratios+=("$ratio")
  printf 'round %d: nmtrain %8.1f images/s, PyTorch (Python) %8.1f images/s, ratio %sx\n' \
    "$round" "$ours" "$theirs" "$ratio"
done
median_ratio=$(printf '%s\n' "${ratios[@]}" | median)
echo "median ratio:     ${median_ratio}x"
