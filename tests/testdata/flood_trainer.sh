#!/usr/bin/env bash
# A stand-in for nmtrain, for the log-flood test (tests/log_flood_e2e_test.sh): as rank 0 it says it is ready
# (<out>/ready), waits for <work_dir>/go, prints <work_dir>/flood_lines lines "flood line 1", "flood line 2",
# ... on stdout, then a final metric line, and exits 0.
out=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ "${args[i]}" == --out ]] && out=${args[i + 1]}
done
mkdir -p "$out"
[[ "$RANK" == 0 ]] || exit 0
work="$(cd "$out/../.." && pwd)"
touch "$out/ready"
while [[ ! -e "$work/go" ]]; do sleep 0.05; done
seq 1 "$(cat "$work/flood_lines")" | sed 's/^/flood line /'
printf '{"kind":"final","epoch":0,"step":1,"top1":0.5}\n'
