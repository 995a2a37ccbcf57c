#!/usr/bin/env bash
# Training throughput of nmtrain vs today's PyTorch from Python, eager and torch.compile, on the same model,
# recipe and data: vit_micro_patch4_28 on Fashion-MNIST, batch 128, AdamW, label smoothing 0.1, dense, 1
# intra-op thread each, the same number of images. The three alternate for ROUNDS rounds (so a change in the
# machine's load hits all of them); prints the CPU, each side's BLAS and vector ISA, every round, and the median
# of the per-round ratios of nmtrain to the better of eager and compiled (target >= 1.25).
# Usage: bench/nmtrain_vs_pytorch.sh [IMAGES] [THREADS] [ROUNDS]
#   nmtrain: $NMTRAIN or bazel-bin/worker/trainer/nmtrain (built when missing); NMSPARSE_FUSED_KERNELS=0
#   measures it without the fused CPU kernels.
#   PyTorch: the test command's venv with pip's torch (tools/libtorch2_env.sh; NMSPARSE_TORCH_VERSION, default
#   2.11.0), installed there when missing, with numpy; or PYTHON=/path/to/python with torch and numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_lib.sh
images=${1:-4096}
threads=${2:-1}
rounds=${3:-5}
[[ -d /usr/share/datasets/fashion-mnist ]] || bash tools/bootstrap.sh >&2
nmtrain=${NMTRAIN:-bazel-bin/worker/trainer/nmtrain}
[[ -x "$nmtrain" ]] || bazel build //worker/trainer:nmtrain >&2
if [[ -z "${PYTHON:-}" ]]; then
  torch_dir=$(bash tools/libtorch2_env.sh)   # <venv>/lib/pythonX.Y/site-packages/torch
  PYTHON=$(cd "$torch_dir/../../../.." && pwd)/bin/python
fi
"$PYTHON" -c 'import numpy' 2>/dev/null ||
  "$PYTHON" -m pip install -q --disable-pip-version-check numpy >&2
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

json_field() { grep -o "\"$1\": *[^,}]*" | head -1 | cut -d: -f2- | tr -d ' "'; }
pytorch() { "$PYTHON" bench/vit_pytorch.py --images "$images" --threads "$threads" "$@"; }

echo "vit_micro_patch4_28, Fashion-MNIST, batch 128, $images images, $threads thread(s), load $(cut -d' ' -f1 /proc/loadavg)"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
ratios=()
for round in $(seq "$rounds"); do
  rm -rf "$work/out"
  ours=$("$nmtrain" --spec "$work/spec.yaml" --out "$work/out" --threads "$threads" 2>"$work/nmtrain.err" |
         epoch_field images_per_s) || { cat "$work/nmtrain.err" >&2; exit 1; }
  eager_json=$(pytorch)
  compiled_json=$(pytorch --compile)
  if ((round == 1)); then
    echo "nmtrain ($nmtrain): $(grep -m1 'nmtrain: BLAS' "$work/nmtrain.err" | sed 's/^nmtrain: //')"
    echo "PyTorch $(json_field torch <<<"$eager_json") ($PYTHON): BLAS $(json_field blas <<<"$eager_json"), ATen" \
         "CPU capability $(json_field cpu_capability <<<"$eager_json")"
  fi
  eager=$(json_field images_per_s <<<"$eager_json")
  compiled=$(json_field images_per_s <<<"$compiled_json")
  ratio=$(python3 -c "print(f'{$ours / max($eager, $compiled):.2f}')")
  ratios+=("$ratio")
  printf 'round %d: nmtrain %7.1f, PyTorch eager %7.1f, torch.compile %7.1f images/s; nmtrain / best %sx\n' \
    "$round" "$ours" "$eager" "$compiled" "$ratio"
done
echo "median ratio to the best of eager and compiled: $(printf '%s\n' "${ratios[@]}" | median)x (target >= 1.25x)"
