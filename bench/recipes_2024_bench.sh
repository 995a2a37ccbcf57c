#!/usr/bin/env bash
# The recipes side by side (issue 42): every recipe of schemas/examples/recipes_2024_sweep.yaml at 2:4 on the
# Fashion-MNIST micro ViT, 3 seeds (bench/recipes_2024_bench_sweep.yaml), trained on this machine's CPU through
# the real nmserver, one nmworker with two single-threaded slots, and nmtrain. Prints one row per recipe: top-1
# of the deployable model (deploy_top1: every sparse layer hard-masked at 2:4) as mean ± sample std over the
# seeds, training FLOPs as each recipe computes them (docs/sparsity-method.md §10), and per run (means) the
# trainer's training seconds and the wall seconds from start to end (evaluation, start-up); then the sweep's
# wall time. Writes `nmctl report` (recipe table, top-1 vs training FLOPs,
# flip rate per recipe) under REPORT_DIR when set.
#   bench/recipes_2024_bench.sh [nmctl submit options, e.g. --set data.train_subset=1000]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_lib.sh
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
build_service_programs "$work"

"$nmserver" --listen=127.0.0.1:0 --db="$work/nmsparse.db" >"$work/nmserver.log" 2>&1 &
pids+=($!)
address=$(nmserver_address "$work/nmserver.log")
export NMSPARSE_COORDINATOR=$address
"$nmworker" --coordinator="$address" --work_dir="$work/worker" --trainer="$nmtrain" --cpu-slots=2 \
  >"$work/nmworker.log" 2>&1 &
pids+=($!)

start=$(date +%s)
sweep=$("$nmctl" submit bench/recipes_2024_bench_sweep.yaml --json "$@" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["sweep"]["id"])')
"$nmctl" follow "$sweep" >"$work/follow.log" 2>&1 || { cat "$work/follow.log" >&2; exit 1; }
wall=$(($(date +%s) - start))

"$nmctl" runs --sweep "$sweep" --json >"$work/runs.json"
echo "vit_micro_patch4_28, Fashion-MNIST (4000 training, 1000 test images), 2 epochs, 2:4 on FF, 3 seeds;" \
  "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
python3 - "$work/runs.json" <<'PY'
import json, statistics, sys
rows = {}
for run in json.load(open(sys.argv[1]))["runs"]:
    final = run.get("final_metrics") or {}
    if run["state"] != "SUCCEEDED" or "flops" not in final:  # Cancelled by hand, or failed: said, not counted.
        print(f"left out: run {run['id']} {run['labels']}: {run['state']}", file=sys.stderr)
        continue
    wall = (run["finished_at_ms"] - run["started_at_ms"]) / 1000
    rows.setdefault(run["labels"]["recipe"], []).append((final, wall))
def mean_sd(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)
print("recipe   n  deploy top-1 (%)  training FLOPs  train s/run  wall s/run")
for recipe, runs in rows.items():
    top1, sd = mean_sd([100 * f.get("deploy_top1", f["top1"]) for f, _ in runs])
    flops = statistics.mean(f["flops"] for f, _ in runs)
    train = statistics.mean(f["train_seconds"] for f, _ in runs)
    wall = statistics.mean(w for _, w in runs)
    print(f"{recipe:<7} {len(runs):>2}  {top1:>7.2f} ± {sd:>5.2f}  {flops:>14.4g}  {train:>11.1f}  {wall:>10.1f}")
PY
echo "sweep wall time: ${wall} s (two runs at a time)"
if [[ -n "${REPORT_DIR:-}" ]]; then
  "$nmctl" report "$sweep" --metric deploy_top1 -o "$REPORT_DIR" >/dev/null && echo "report in $REPORT_DIR/index.html"
fi
