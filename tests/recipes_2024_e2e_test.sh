#!/usr/bin/env bash
# The 2024 recipes end to end (issue 42): a sweep of STE 2:4, S-STE (on the MLP, and on every linear of the
# blocks), STEP, HU24, SRIGL and BIMASK through the real nmserver, one nmworker and nmtrain; every run
# SUCCEEDS, its stored spec has sparsity_type SSTE, STEP, HU24 or BIMASK at 2:4 or a SRIGL group, its epoch
# lines are in the sparse phase, HU24's last epoch line shows the mask refreshed at step 8, SRIGL's shows fc1 of
# block 0 within its budget (sparsity at least 0.75: k x active rows <= int(0.25 x numel); ablated neurons make
# it more), BIMASK's the forward calls of 8 steps and 2 evaluations on all four block linears, and
# `nmctl compare` has one row per recipe.
#
# Usage: recipes_2024_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN SWEEP_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
sweep_yaml=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/recipes_2024_e2e.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

start_server 0
start_worker w1

sweep=$(ctl submit "$sweep_yaml" --json | json "d['sweep']['id']")
check "the sweep is submitted" test -n "$sweep"
check "its 7 runs end SUCCEEDED" wait_runs "$sweep" \
  "len(runs) == 7 and all(r['state'] == 'SUCCEEDED' for r in runs)" 180
ctl runs --sweep "$sweep" >"$tmp/runs.out" 2>&1
log "nmctl runs:"; cat "$tmp/runs.out" >&2
for run in $(ctl runs --sweep "$sweep" --json | json "' '.join(str(r['id']) for r in d['runs'])"); do
  ctl run "$run" >"$tmp/run_$run.out" 2>&1
  ctl run "$run" --json >"$tmp/run_$run.json"
  grep -q "algorithm: SRIGL" "$tmp/run_$run.out" && continue  # Dynamic sparsity has no N:M phase label.
  check "run $run trained its last epoch in the sparse phase" test "$(json \
    "[p['labels'].get('phase') for p in d['metrics'] if p['kind'] == 'epoch'][-1]" <"$tmp/run_$run.json")" = sparse
done
check "two runs' stored specs say SSTE" test "$(grep -l "sparsity_type: SSTE" "$tmp"/run_*.out | wc -l)" -eq 2
check "one run's stored spec says STEP" test "$(grep -l "sparsity_type: STEP" "$tmp"/run_*.out | wc -l)" -eq 1
hu24_run=$(grep -l "sparsity_type: HU24" "$tmp"/run_*.out | head -1)
check "one run's stored spec says HU24" test -n "$hu24_run"
check "HU24's last epoch line has the mask of step 8" test "$(json \
  "float([p['values'].get('mask_refresh_step') for p in d['metrics'] if p['kind'] == 'epoch'][-1]) == 8" \
  <"${hu24_run%.out}.json")" = True
srigl_run=$(grep -l "algorithm: SRIGL" "$tmp"/run_*.out | head -1)
check "one run's stored spec has a SRIGL group" test -n "$srigl_run"
check "SRIGL's last epoch line has fc1 of block 0 within its budget" test "$(json \
  "0.75 <= [p['values'].get('sparsity/blocks.0.mlp.fc1.weight') for p in d['metrics'] if p['kind'] == 'epoch'][-1] < 1" \
  <"${srigl_run%.out}.json")" = True
bimask_run=$(grep -l "sparsity_type: BIMASK" "$tmp"/run_*.out | head -1)
check "one run's stored spec says BIMASK" test -n "$bimask_run"
check "BIMASK's last epoch line counts 8 training and 2 evaluation forwards" test "$(json \
  "float([p['values'].get('bimask_forward_calls') for p in d['metrics'] if p['kind'] == 'epoch'][-1]) == 10" \
  <"${bimask_run%.out}.json")" = True
ctl compare "$sweep" --metric top1 >"$tmp/compare.out" 2>&1
log "nmctl compare:"; cat "$tmp/compare.out" >&2
for label in ste_2_4 sste sste_all_linears step hu24 srigl bimask; do
  check "compare has a row for $label" grep -qw "$label" "$tmp/compare.out"
done
finish
