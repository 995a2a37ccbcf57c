#!/usr/bin/env bash
# The data loader benchmark (issue 23): nmsparse's ViT-B training transform stage by stage
# (data_loader_bench) against timm's own pipeline (timm_loader.py: create_transform + a PyTorch DataLoader
# with the same number of workers), in the same run on the same test-made JPEGs (make_jpegs.py: 500x375,
# quality 90). Prints images/s and images per CPU-second (per core, however loaded the machine) of each, the
# ratio per core, and each nmsparse stage's share of the full
# transform's time (RandomResizedCrop's with its DCT-reduced decode).
#
# Usage: bench/data_loader/run.sh [THREADS=1] [IMAGES=200] [EPOCHS=3]   (from the repository root)
# Needs the venv with timm (tools/test_libtorch2.sh makes it): $NMSPARSE_VENV, default
# ~/.cache/nmsparse/torch-2.11.0.
set -euo pipefail
threads=${1:-1}; images=${2:-200}; epochs=${3:-3}
venv=${NMSPARSE_VENV:-$HOME/.cache/nmsparse/torch-2.11.0}
dir=$(dirname "${BASH_SOURCE[0]}")
root=${NMSPARSE_BENCH_JPEGS:-/tmp/nmsparse-bench-jpegs-$images}
[ -d "$root/train" ] || "$venv/bin/python" "$dir/make_jpegs.py" "$root" "$images"
bazel build ${BAZEL_FLAGS:-} //bench/data_loader:data_loader_bench >&2
ours=$(bazel-bin/bench/data_loader/data_loader_bench "$root" "$threads" "$epochs")
theirs=$("$venv/bin/python" "$dir/timm_loader.py" "$root" "$threads" "$epochs")
echo "$(date -u +%F) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $threads thread(s)"
echo "$ours" | awk '{printf "nmsparse %-18s %8.1f images/s %8.1f images/s/core\n", $1, $2, $3}'
awk -v ours="$ours" -v theirs="$theirs" 'BEGIN {
  n = split(ours, o, "\n"); prev = 0
  for (i = 1; i <= n; i++) { split(o[i], f, " "); rate[f[1]] = f[3]; names[i] = f[1] }
  split(theirs, t, "\n"); split(t[1], a, " "); split(t[2], b, " ")
  printf "timm     train (DataLoader) %8.1f images/s %8.1f images/s/core\n", a[2], a[3]
  printf "timm     decode (PIL)       %8.1f images/s %8.1f images/s/core\n", b[2], b[3]
  printf "ratio nmsparse full / timm: %.2fx per core\n", rate["full"] / a[3]
  total = 1 / rate["full"]
  for (i = 1; i <= n; i++) {  # the rrc share includes its (reduced) decode; decode alone is the floor.
    if (names[i] == "decode") continue
    cost = 1 / rate[names[i]]
    printf "share %-12s %5.1f%%\n", names[i], 100 * (cost - prev) / total
    prev = cost
  }
}'
