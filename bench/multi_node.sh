#!/usr/bin/env bash
# One run on two nodes against one node (issue 41): the same data-parallel run of 2 ranks, as 1 node x 2 ranks
# (the baseline) and as 2 nodes x 1 rank (nmworkers on 127.0.0.2 and .3 sharing a work directory), through the
# real nmserver + nmworker + nmtrain with Gloo on the CPU; then the time from a death in a 2-node run (one rank's
# nmtrain SIGKILLed, or one node's nmworker SIGKILLed) to the other node's rank exiting. Prints a table: each
# figure, its median over REPS, and the ratio to the baseline.
#
# Both layouts move the same bytes over Gloo's TCP on loopback; what differs is that the 2-node ranks are started
# by two nmworkers meeting at node 0's advertised address. The deaths are timed from the SIGKILL to the moment
# the surviving rank's process is gone (polled every 20 ms), with the ranks held mid-epoch (NMTRAIN_HOLD_*);
# nmserver's --lease_ms 3000 --grace_ms 1000 (heartbeats every 750 ms) and nmworker's --kill_grace_ms 3000.
#
# Usage: bench/multi_node.sh [REPS]   (default 3; builds the four programs first)
set -uo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/multi_node_bench.XXXXXX")
source bench/bench_lib.sh
build_service_programs "$tmp" || exit 1
db=$tmp/nmsparse.db work=$tmp/work hold=$tmp/hold
run_yaml=$PWD/tests/testdata/multi_node_run.yaml

source tests/e2e_lib.sh
export NMTRAIN_HOLD_FILE="$hold" NMTRAIN_HOLD_AFTER_STEPS=15
node() { start_cpu_worker "$1" --advertise_addr="$2" --storage=bench --kill_grace_ms=3000; }

start_server 0 --rendezvous_ports=29600-29699
node n2 127.0.0.2
node n3 127.0.0.3
start_cpu_worker single --cpu-slots=2

submit() { ctl submit "$run_yaml" --no-reuse --json "$@" | json "d['runs'][0]['id']"; }
# Throughput: rank 0's images/s over the epochs (every epoch line, median), 1600 images x 2 epochs in batches of 40.
throughput() {  # throughput RUN_FLAGS...: prints the run's median epoch images/s
  local run
  run=$(submit --set data.train_subset=1600 --set schedule.epochs=2 "$@") || return 1
  wait_state "$run" SUCCEEDED 1800 >&2 || return 1
  ctl run "$run" --json | json "'\n'.join(str(p['values']['images_per_s']) for p in d['metrics'] if p['kind']=='epoch')" | median
}
gang_worker() {  # gang_worker RUN NODE: the host name of that node's worker
  local id
  id=$(ctl run "$1" --json | json "d['run']['gang']['members'][$2]['worker_id']")
  ctl workers --json | json "[w['host'] for w in d['workers'] if str(w['id'])=='$id'][0]"
}
# A 2-node run held at step 15; KIND rank|worker: SIGKILL node 1's rank or node 1's nmworker; sets death_ms to the
# ms until node 0's rank is gone. Not run in a subshell: it restarts a killed worker, whose pid must be kept.
death_to_stop() {
  local run survivor victim rank0 killed stopped
  touch "$hold"
  run=$(ctl submit "$death_yaml" --no-reuse --json | json "d['runs'][0]['id']") || return 1
  wait_log "$run" "holding after 15 steps" || return 1
  survivor=$(gang_worker "$run" 0) victim=$(gang_worker "$run" 1)
  rank0=$(pgrep -P "${worker_pid[$survivor]}")
  killed=$(now_ms)
  if [[ $1 == rank ]]; then
    kill -KILL $(pgrep -P "${worker_pid[$victim]}")
  else
    local ranks
    ranks=$(pgrep -P "${worker_pid[$victim]}")
    kill -KILL "${worker_pid[$victim]}"
    kill -KILL $ranks 2>/dev/null  # A dead node takes its ranks with it.
  fi
  stopped=$(until_gone 60 "$rank0") || return 1
  rm -f "$hold"
  wait_state "$run" FAILED 120 >&2 || return 1
  if [[ $1 == worker ]]; then  # The node comes back for the next repetition.
    wait "${worker_pid[$victim]}" 2>/dev/null
    node "$victim" "127.0.0.${victim#n}"
  fi
  death_ms=$((stopped - killed))
}

death_yaml=$tmp/death.yaml  # Not retried: each death ends its run, and the next repetition starts afresh.
cat >"$death_yaml" <<YAML
name: death
base_file: $run_yaml
max_retries: 0
grid:
  resources.nodes: [2]
  schedule.epochs: [3]
YAML

declare -A samples=()
for ((i = 1; i <= reps; i++)); do
  log "repetition $i of $reps"
  samples[one]+="$(throughput --set resources.gpus=2)"$'\n'
  samples[two]+="$(throughput --set resources.nodes=2)"$'\n'
  death_to_stop rank && samples[rank]+="$death_ms"$'\n'
  death_to_stop worker && samples[worker]+="$death_ms"$'\n'
done
med() { grep . <<<"${samples[$1]}" | median; }
one=$(med one) two=$(med two)
printf '%-58s %12s %8s\n' "figure (median of $reps)" value ratio
printf '%-58s %12.1f %8s\n' "1 node x 2 ranks: images/s (baseline)" "$one" 1.00
printf '%-58s %12.1f %8.2f\n' "2 nodes x 1 rank: images/s" "$two" "$(awk -v a="$two" -v b="$one" 'BEGIN{print a/b}')"
printf '%-58s %12s %8s\n' "rank SIGKILLed -> other node's rank gone: ms" "$(med rank)" -
printf '%-58s %12s %8s\n' "nmworker SIGKILLed -> other node's rank gone: ms" "$(med worker)" -
log "samples: 1-node $(echo ${samples[one]}); 2-node $(echo ${samples[two]}); rank death $(echo ${samples[rank]}); worker death $(echo ${samples[worker]})"
finish
