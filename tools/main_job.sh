#!/usr/bin/env bash
# The main job: a small N:M sweep on Fashion-MNIST through the real coordinator, worker and trainer, ending in
# a results table. Installs what is missing (idempotent) and builds first.
#
# With NMSPARSE_COORDINATOR=host:port set, the sweep goes to that coordinator (its workers train it). Without
# it, an embedded coordinator (SQLite under .nmsparse/) and one local CPU worker are started and stopped here.
# Usage: tools/main_job.sh [sweep.yaml] [nmctl submit options, e.g. --set schedule.epochs=1]
# NMSPARSE_MAIN_JOB_SUMMARY=PROGRAM: after the table, PROGRAM SWEEP_ID runs (NMCTL set to nmctl) while the
# coordinator is still up (bench/claim/run.sh prints the paired deltas so).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
sweep=${1:-schemas/examples/quick_fmnist_sweep.yaml}
shift || true

bash tools/bootstrap.sh
bazel build --disk_cache="${HOME}/.cache/nmsparse-bazel-disk" //:nmserver //:nmworker //:nmtrain //:nmctl 2>&1 |
  grep -vE 'linux-sandbox|^\[[0-9,]+ / [0-9,]+\]' | tail -n 3
bin="$root/bazel-bin"  # The aliases' outputs stay at their packages' paths.
state="$root/.nmsparse"
mkdir -p "$state"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

if [[ -z "${NMSPARSE_COORDINATOR:-}" ]]; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  export NMSPARSE_COORDINATOR="127.0.0.1:${port}"
  "$bin/server/nmserver" --listen="$NMSPARSE_COORDINATOR" --db="$state/nmsparse.db" \
    >"$state/nmserver.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q "listening" "$state/nmserver.log" && break; sleep 0.1; done
  grep -q "listening" "$state/nmserver.log" || { cat "$state/nmserver.log"; exit 1; }
  # Two cores: two single-threaded CPU slots train two runs at once.
  "$bin/worker/agent/nmworker" --coordinator="$NMSPARSE_COORDINATOR" --work_dir="$state/worker" \
    --trainer="$bin/worker/trainer/nmtrain" --cpu-slots=2 >"$state/nmworker.log" 2>&1 &
  pids+=($!)
  echo "main job: embedded coordinator on $NMSPARSE_COORDINATOR, logs in $state/" >&2
fi

nmctl="$bin/cli/nmctl"
sweep_id=$("$nmctl" submit "$sweep" --json "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sweep"]["id"])')
echo "main job: sweep $sweep_id submitted from $sweep" >&2
"$nmctl" follow "$sweep_id"
"$nmctl" runs --sweep "$sweep_id"
echo
# The default metric: the deployable (hard-masked) top-1 where the runs report it, the raw top-1 beside it.
"$nmctl" compare "$sweep_id"
if [[ -n "${NMSPARSE_MAIN_JOB_SUMMARY:-}" ]]; then
  echo
  NMCTL="$nmctl" "$NMSPARSE_MAIN_JOB_SUMMARY" "$sweep_id"
fi
# The figures and the table as an HTML page (docs/dashboard.md); not fatal: the table above is the result.
if "$nmctl" report "$sweep_id" -o "$state/report-$sweep_id" >/dev/null; then
  echo "main job: report in $state/report-$sweep_id/index.html" >&2
else
  echo "main job: warning: nmctl report failed (is gnuplot installed? tools/bootstrap.sh)" >&2
fi
