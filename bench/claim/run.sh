#!/usr/bin/env bash
# The paper's high-sparsity claim (bench/claim/claim_sweep.yaml) through the real nmserver + nmworker + nmtrain
# (tools/main_job.sh: an embedded coordinator and a local worker, or NMSPARSE_COORDINATOR's cluster), then the
# table and each recipe's paired Δ vs SR-STE (bench/claim/summarise.sh).
#   --mini: the CPU miniature that checks the pipeline end to end (1 epoch on 1,024 training and 500 test
#           images, 8 steps; every recipe, N:M and seed of the full grid): minutes, not the claim.
# Other arguments go to nmctl submit (e.g. --no-reuse).
set -euo pipefail
cd "$(dirname "$0")/../.."
args=()
for arg in "$@"; do
  if [[ "$arg" == --mini ]]; then
    args+=(--set schedule.epochs=1 --set schedule.warmup_epochs=0.25 --set data.train_subset=1024
      --set data.eval_subset=500 --set name=claim-high-sparsity-mini)
  else
    args+=("$arg")
  fi
done
NMSPARSE_MAIN_JOB_SUMMARY=bench/claim/summarise.sh exec tools/main_job.sh bench/claim/claim_sweep.yaml "${args[@]}"
