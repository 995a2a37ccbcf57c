#!/usr/bin/env bash
# The host-sync guard on the CPU (docs/testing.md): a lint over the code a training step runs (the sparsity
# code, the training loop, optimizer, loss, models, data parallelism, the device transfer) that flags every
# call that makes the host wait for a GPU: .item(), .cpu(), a copy to the CPU, ReadToHost, synchronize,
# blocking cudaMemcpy, and the ops whose output size the host must read (nonzero, masked_select, unique).
# Each hit must be in the allow-list (tools/host_sync_allowlist.txt: "path | text on the line | why"), and
# each entry must still match a line, so that a new host read cannot be added unnoticed and a stale reason
# does not linger. Its GPU counterpart sees LibTorch's own calls too: NMTRAIN_SYNC_DEBUG=error
# (worker/trainer/device/sync_debug.h), run by bench/gpu/node_check.sh.
# Usage: tools/check_host_syncs.sh [--allowlist FILE] [FILE...]   (default: the step's files, from the root)
set -euo pipefail
allowlist=tools/host_sync_allowlist.txt
if [[ "${1:-}" == "--allowlist" ]]; then
  allowlist=$2
  shift 2
fi
if [[ $# -eq 0 ]]; then
  cd "$(dirname "$0")/.."
  set -- $(ls worker/sparsity/*.cc worker/sparsity/*/*.cc worker/trainer/models/*.cc \
    worker/trainer/{trainer,evaluator,model_ema}.cc \
    worker/trainer/optim/{optimizer,optimizer_step,adamw_step,step_update}.cc worker/trainer/loss/loss.cc \
    worker/trainer/precision/{loss_scaler,autocast_guard}.cc worker/trainer/distributed/distributed.cc \
    worker/trainer/device/host_reads.cc \
    worker/trainer/data/batch_loader.cc | grep -v -e '_test\.cc$' -e '_testing\.cc$' -e 'shared_testdata')
fi
pattern='\.item *[<(]|\.cpu\(\)|\.to\((torch::)?kCPU|Device\((torch::)?kCPU\)\)|ReadToHost\(|[sS]ynchronize\(|cudaMemcpy\(|nonzero\(|masked_select\(|\.unique\(|_unique\('
hits=$(grep -nE "$pattern" "$@" /dev/null | grep -vE '^[^:]+:[0-9]+: *//' || true)
status=0
# Every hit needs an entry of its file whose text is on the line.
while IFS= read -r hit; do
  [[ -z "$hit" ]] && continue
  file=${hit%%:*}
  text=${hit#*:*:}
  if ! awk -F ' [|] ' -v file="$file" -v text="$text" '
      /^#/ || NF < 3 { next }
      { n = length(file) - length($1) }
      (file == $1 || (n > 0 && substr(file, n) == "/" $1)) && index(text, $2) { found = 1 }
      END { exit !found }' "$allowlist"; then
    echo "host sync in a step's code path, not in $allowlist: $hit" >&2
    status=1
  fi
done <<< "$hits"
# Every entry must still match a hit.
while IFS= read -r entry; do
  [[ -z "$entry" || "$entry" == \#* ]] && continue
  path=$(awk -F ' [|] ' '{print $1}' <<< "$entry")
  needle=$(awk -F ' [|] ' '{print $2}' <<< "$entry")
  if ! grep -F -- "$needle" <<< "$(grep -E "^([^:]*/)?$path:" <<< "$hits")" > /dev/null; then
    echo "stale entry in $allowlist (no such host sync any more): $entry" >&2
    status=1
  fi
done < "$allowlist"
if [[ $status -eq 0 ]]; then
  echo "host syncs: $(grep -c . <<< "$hits") in $# files, each allowed for its reason"
fi
exit $status
