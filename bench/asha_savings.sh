#!/usr/bin/env bash
# ASHA's and TPE's savings (issue 14): the same 16-run grid (bench/asha_savings_sweep.yaml) run to the end, then
# with early_stopping: {policy: asha, metric: top1, mode: max, min_resource: 1, reduction_factor: 2}, then a TPE
# search of 8 runs over the same axes (bench/tpe_search_sweep.yaml), through the real nmserver + nmworker +
# nmtrain on loopback with a fresh database (so nothing is reused). Prints, for each sweep, the CPU-hours (the
# sum of its runs' wall times, started -> finished, times cpu_threads 1), the epochs trained and the best final
# top-1 among its runs that trained every epoch, then the ratios to the full grid.
#
# Issue 40's variants of the ASHA sweep: asha_rev, the same grid with its learning rates written in the reverse
# order (the dispatch order is a shuffle keyed by each run's content, so with one slot it takes the same
# decisions); asha_first, the rule before issue 40 (min_peers: 1, the first run at a rung always goes on).
# Each prints the runs it stopped, by their labels, so that two variants' decisions can be compared.
#
# Usage: bench/asha_savings.sh [SLOTS]   (worker CPU slots, default 2; builds the four programs first)
#        SWEEPS="grid asha tpe" (the default) chooses the sweeps, from grid asha asha_rev asha_first tpe; the
#        ratios need grid.
set -uo pipefail
cd "$(dirname "$0")/.."
slots=${1:-2}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/asha_savings.XXXXXX")
source bench/bench_lib.sh
build_service_programs "$tmp" || exit 1
db=$tmp/nmsparse.db
full_yaml=bench/asha_savings_sweep.yaml
asha_yaml=$tmp/asha.yaml
asha_block="early_stopping: {policy: asha, metric: top1, mode: max, min_resource: 1, reduction_factor: 2"
{ cat "$full_yaml"; echo "$asha_block}"; } >"$asha_yaml"
{ sed 's/optimizer.lr: \[0.0002, 0.0005, 0.002, 0.005\]/optimizer.lr: [0.005, 0.002, 0.0005, 0.0002]/' "$full_yaml"
  echo "$asha_block}"; } >"$tmp/asha_rev.yaml"
grep -q 'optimizer.lr: \[0.005, 0.002, 0.0005, 0.0002\]' "$tmp/asha_rev.yaml" || { echo "asha_rev: lr axis not found" >&2; exit 1; }
{ cat "$full_yaml"; echo "$asha_block, min_peers: 1}"; } >"$tmp/asha_first.yaml"

source tests/e2e_lib.sh
start_worker() {
  "$nmworker" --coordinator="$NMSPARSE_COORDINATOR" --work_dir="$tmp/work" --trainer="$nmtrain" \
    --cpu-slots="$slots" --host="$1" >"$tmp/nmworker-$1.log" 2>&1 &
  worker_pid[$1]=$!
}

# Runs one sweep file to its end; prints "CPU_HOURS BEST_TOP1 RUNS_FULL RUNS_STOPPED EPOCHS". EPOCHS (the
# epochs trained, counted from the runs' epoch metric points) does not depend on the machine's load.
measure() {
  local sweep
  sweep=$(ctl submit "$1" --no-reuse --json | json "d['sweep']['id']") || return 1
  wait_runs "$sweep" "all(r['state'] in ('SUCCEEDED','STOPPED_EARLY','FAILED','CANCELLED') for r in runs)" 7200 || return 1
  local epochs=0 r
  for r in $(ctl runs --sweep "$sweep" --json | json "' '.join(str(r['id']) for r in d['runs'])"); do
    epochs=$((epochs + $(ctl run "$r" --json | json "sum(1 for p in d['metrics'] if p['kind'] == 'epoch')")))
  done
  local summary
  summary=$(ctl runs --sweep "$sweep" --json | python3 -c "
import json, sys
runs = json.load(sys.stdin)['runs']
ms = sum(int(r['finished_at_ms']) - int(r['started_at_ms']) for r in runs if int(r.get('started_at_ms', 0)) > 0)
full = [r for r in runs if r['state'] == 'SUCCEEDED']
best = max((r['final_metrics'].get('top1', 0) for r in full), default=float('nan'))
print(f'{ms / 3.6e6:.5f} {best:.4f} {len(full)} {sum(r[\"state\"] == \"STOPPED_EARLY\" for r in runs)} $epochs')")
  ctl runs --sweep "$sweep" >"$tmp/runs-$sweep.txt"
  # The stopped runs by their labels (keys sorted), for comparing variants.
  ctl runs --sweep "$sweep" --json | python3 -c "
import json, sys
runs = json.load(sys.stdin)['runs']
stopped = sorted(' '.join(f'{k}={r[\"labels\"][k]}' for k in sorted(r['labels'])) for r in runs
                 if r['state'] == 'STOPPED_EARLY')
print('stopped: ' + ('; '.join(stopped) or 'none'))" >"$tmp/stopped-$sweep.txt"
  echo "$sweep" >"$tmp/last-sweep"
  echo "$summary"  # Last: the caller reads this line, then the files above.
}

start_server 0
start_worker bench
sweeps=${SWEEPS:-grid asha tpe}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), slots $slots, $(date -u +%F)"
declare -A file=([grid]="$full_yaml" [asha]="$asha_yaml" [asha_rev]="$tmp/asha_rev.yaml"
  [asha_first]="$tmp/asha_first.yaml" [tpe]=bench/tpe_search_sweep.yaml) hours epochs
for name in $sweeps; do
  log "$name ..."
  read -r h best n stopped e < <(measure "${file[$name]}") || { log "$name sweep failed"; exit 1; }
  hours[$name]=$h
  epochs[$name]=$e
  printf '%-5s %s CPU-hours, %s epochs trained, best final top1 %s (%s runs to the end, %s stopped early)\n' \
    "$name:" "$h" "$e" "$best" "$n" "$stopped"
  [[ $name == asha* ]] && cat "$tmp/stopped-$(cat "$tmp/last-sweep").txt"
done
if [[ -n "${hours[grid]:-}" ]]; then
  for name in asha asha_rev asha_first tpe; do
    [[ -n "${hours[$name]:-}" ]] || continue
    python3 -c "print(f'$name / grid: CPU-hours {${hours[$name]} / ${hours[grid]}:.3f}, epochs {${epochs[$name]} / ${epochs[grid]}:.3f}')"
  done
fi
log "run tables: $tmp/runs-*.txt"
finish
