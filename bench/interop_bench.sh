#!/usr/bin/env bash
# Export and import times of a ViT-B/16 (timm's vit_base_patch16_224, random weights, 86M parameters) by
# nmtrain beside PyTorch and safetensors in the same run, on this machine's CPU:
#   - Python (the LibTorch 2.x venv of tools/libtorch2_env.sh, bench/interop_bench.py): torch.save /
#     torch.load (weights_only) and safetensors.torch.save_file / load_file of the state dict;
#   - nmtrain's import: model.initial_checkpoint from the safetensors file and from the torch.save file, with
#     its model.initial_checkpoint_sha256 as a submitted run has it, the time of LoadInitialWeights as nmtrain
#     logs it (the file read once and hashed, parsed, checked against the model, copied into it);
#   - nmtrain's export: `nmtrain --export CHECKPOINT -o DIR` wall-clock, the whole process (start, spec, model
#     built, LibTorch checkpoint read, config.json, sparsity.json and model.safetensors written).
# Each is the median of ROUNDS (default 3); ratios are to safetensors' load_file (imports) and save_file
# (exports) of the same run.
#   bench/interop_bench.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
torch_dir=$(bash tools/libtorch2_env.sh)
python=${NMSPARSE_TORCH_PYTHON:-$(dirname "$(dirname "$(dirname "$(dirname "$torch_dir")")")")/bin/python}
bazel build --jobs=2 --disk_cache="$HOME/.cache/nmsparse-bazel-disk" //worker/trainer:nmtrain >&2
nmtrain=bazel-bin/worker/trainer/nmtrain
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source bench/bench_lib.sh

"$python" -W ignore bench/interop_bench.py "$work" "$rounds" >"$work/python.txt"
py() { awk -v k="$1" '$1 == k {print $2}' "$work/python.txt"; }

# One optimizer step of batch 2 on synthetic images: the run exists to load its initial weights.
spec() {
  cat <<SPEC
seed: 0
model: {name: vit_base_patch16_224, initial_checkpoint: $1, initial_checkpoint_sha256: $(sha256sum "$1" | cut -d' ' -f1)}
data: {dataset: synthetic, synthetic_size: 2, eval_subset: 2, batch_size: 2}
schedule: {epochs: 1, warmup_epochs: 0}
SPEC
}
for format in safetensors pth; do
  spec "$work/vit_b16.$format" >"$work/$format.yaml"
  for round in $(seq "$rounds"); do
    "$nmtrain" --spec "$work/$format.yaml" --out "$work/run_$format.$round" >/dev/null 2>"$work/log"
    grep -o 'loaded in [0-9.e+-]* s' "$work/log" | awk '{print $3}' >>"$work/import_$format"
  done
done
for round in $(seq "$rounds"); do
  start=$(date +%s.%N)
  "$nmtrain" --export "$work/run_safetensors.1/checkpoint.pt" -o "$work/export.$round" >/dev/null 2>&1
  awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}' >>"$work/export"
done

save=$(py safetensors_save_file)
load=$(py safetensors_load_file)
row() { printf '%-52s %8.3f s  %6.2fx\n' "$1" "$2" "$(awk -v a="$2" -v b="$3" 'BEGIN {print a / b}')"; }
echo "ViT-B/16, $(py params) parameters, median of $rounds; ratio to safetensors' load_file / save_file"
echo "import"
row "  safetensors.torch.load_file" "$load" "$load"
row "  torch.load (weights_only)" "$(py torch_load)" "$load"
row "  nmtrain initial_checkpoint: safetensors" "$(median <"$work/import_safetensors")" "$load"
row "  nmtrain initial_checkpoint: torch.save .pth" "$(median <"$work/import_pth")" "$load"
echo "export"
row "  safetensors.torch.save_file" "$save" "$save"
row "  torch.save" "$(py torch_save)" "$save"
row "  nmtrain --export (whole process)" "$(median <"$work/export")" "$save"
