#!/usr/bin/env bash
# nmtrain training throughput in bf16 autocast against fp32, on this machine's CPU: the micro ViT
# (vit_micro_patch4_28, batch 128, 1 thread) on 5,120 Fashion-MNIST images, one epoch per run, fp32 and bf16
# runs interleaved ROUNDS times (default 3) so that load from other work hits both alike. Prints each run's
# images/s (training only, the epoch line's images_per_s) and top-1, the medians and the bf16 / fp32 ratio.
#   bench/bf16_vs_fp32.sh [ROUNDS] [extra nmtrain flags, e.g. --threads 2]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
bazel build //worker/trainer:nmtrain >&2
nmtrain=bazel-bin/worker/trainer/nmtrain
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/spec.yaml" <<'EOF'
seed: 0
model: {name: vit_micro_patch4_28}
data: {dataset: fashion_mnist, train_subset: 5120, eval_subset: 1000, batch_size: 128}
optimizer: {lr: 0.002}
schedule: {epochs: 1, warmup_epochs: 0.2}
EOF
source bench/bench_lib.sh
for round in $(seq "$rounds"); do
  for precision in fp32 bf16; do
    out=$("$nmtrain" --spec "$work/spec.yaml" --out "$work/$precision.$round" --precision "$precision" "$@" 2>/dev/null)
    ips=$(epoch_field images_per_s <<<"$out")
    echo "$ips" >>"$work/$precision.ips"
    printf '%s round %d: %8.1f images/s, top-1 %s\n' "$precision" "$round" "$ips" "$(epoch_field top1 <<<"$out")"
  done
done
fp32=$(median <"$work/fp32.ips")
bf16=$(median <"$work/bf16.ips")
printf 'median fp32 %.1f images/s, bf16 %.1f images/s, bf16 / fp32 = %.2f\n' "$fp32" "$bf16" \
  "$(awk -v a="$bf16" -v b="$fp32" 'BEGIN {print a / b}')"
