#!/usr/bin/env bash
# One run on several nodes (docs/cluster.md, "One run on several nodes") with the real nmserver, nmworker and
# nmtrain (Gloo on the CPU). Each node is an nmworker of one CPU slot on a loopback address of its own
# (--advertise_addr 127.0.0.2, .3, .4), all declaring one shared storage (--storage) for one work directory.
# Checks that
# - equivalence: a 2-node x 1-rank run equals a 1-node x 2-rank run of the same spec step for step (losses and
#   final metrics within the tolerance below), its ranks meeting at node 0's address;
# - a 3-node run with 2 such workers waits, and `nmctl runs` and `nmctl cluster` say why ("needs 3 nodes with
#   1 free CPU slot each on one shared storage; 2 have them"), then starts when a third worker registers;
# - all or nothing: SIGKILL of one node's nmworker while the ranks are held after epoch 1 stops the other
#   node's ranks (told in its next heartbeat once the lost worker's lease runs out), the attempt fails as one,
#   and attempt 2 resumes from the epoch-1 checkpoint on the remaining workers and SUCCEEDS.
#
# Usage: multi_node_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN RUN_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
run_yaml=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/multi_node.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"  # One directory for every worker: the "shared storage".
hold="$tmp/hold"  # While it exists, trainers that finished epoch 1 wait (NMTRAIN_HOLD_FILE).

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

export NMTRAIN_HOLD_FILE="$hold" NMTRAIN_HOLD_AFTER_EPOCHS=1
# node NAME ADDRESS: a worker of one CPU slot on its own loopback address, on the shared work directory.
node() { start_cpu_worker "$1" --advertise_addr="$2" --storage=test-shared --kill_grace_ms=3000; }

run_json() { ctl run "$1" --json; }
run_field() { run_json "$1" | json "d['run'].get('$2', '')"; }
first_run() { ctl submit "$@" --json | json "d['runs'][0]['id']"; }
# The (step, loss) pairs of a run's step lines and its final metrics, as JSON.
curve() { run_json "$1" | json "json.dumps([[p['step'], p['values']['loss']] for p in d['metrics'] if p['kind']=='step'])"; }
finals() { run_json "$1" | json "json.dumps(d['run']['final_metrics'])"; }

# A port range of its own, so that parallel tests do not share rendezvous ports.
base=$((20000 + RANDOM % 20000))
start_server 0 --rendezvous_ports="$base-$((base + 49))"
node n2 127.0.0.2
node n3 127.0.0.3
start_cpu_worker single --cpu-slots=2  # No shared storage: it never joins a gang.

# --- equivalence: 2 nodes x 1 rank == 1 node x 2 ranks.
gang=$(first_run "$run_yaml" --set resources.nodes=2 --set name=two-nodes --no-reuse)
one=$(first_run "$run_yaml" --set resources.gpus=2 --set name=one-node --no-reuse)
check "the 2-node run succeeds" wait_state "$gang" SUCCEEDED 300
check "the 1-node 2-rank run succeeds" wait_state "$one" SUCCEEDED 300
# Node 0 is the lower worker id of the two (n2 and n3 register in either order); its ranks meet at the address
# it advertised.
check "the gang was two nodes, meeting at node 0's advertised address" python3 - "$(run_json "$gang")" \
  "$(ctl workers --json)" <<'PY'
import json, sys
g = json.loads(sys.argv[1])['run']['gang']
addr = {str(w['id']): w.get('advertise_addr') for w in json.loads(sys.argv[2])['workers']}
node0 = str(g['members'][0]['worker_id'])
ok = len(g['members']) == 2 and g['master_addr'] == addr[node0] and addr[node0] in ('127.0.0.2', '127.0.0.3')
sys.exit(0 if ok else f"gang {g}, addresses {addr}")
PY
check "the 1-node run used one worker" test "$(run_json "$one" | json "len(d['run'].get('gang', {}).get('members', []))")" = 0
# Both runs have the same two ranks with the same shards; what differs is only where rank 1 lives. Gloo's
# all-reduce of two ranks is one addition per gradient element, which IEEE 754 makes exact to the order, so
# the float32 results can differ only by a rounding per step if the reduction's order changed: the tolerance
# is steps x 2^-23 relative (plus 1e-6 absolute for the JSON's printed digits).
check "losses match step for step, and the final metrics" python3 - "$(curve "$gang")" "$(curve "$one")" \
  "$(finals "$gang")" "$(finals "$one")" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
fa, fb = json.loads(sys.argv[3]), json.loads(sys.argv[4])
if not a or [s for s, _ in a] != [s for s, _ in b]:
    sys.exit(f"steps differ: {a} vs {b}")
steps = a[-1][0]
tol = lambda x: steps * 2.0**-23 * abs(x) + 1e-6
for (s, x), (_, y) in zip(a, b):
    if abs(x - y) > tol(x):
        sys.exit(f"step {s}: loss {x} vs {y}")
for k in ('loss', 'top1'):
    if k in fa and abs(fa[k] - fb[k]) > tol(fa[k]):
        sys.exit(f"final {k}: {fa[k]} vs {fb[k]}")
print(f"{len(a)} step losses and final metrics agree within {steps} x 2^-23", file=sys.stderr)
PY
check "nmctl run lists the gang: node, worker, ranks" bash -c "'$nmctl' run '$gang' | grep -qE '^    node 1: worker [0-9]+, slots 0, ranks 1\$'"
ranks_logged=$(ctl logs "$gang" | grep -c "rank 1" || true)
check "the gang's log carries rank 1's lines (from node 1)" test "$ranks_logged" -gt 0

# --- a 3-node run with 2 shared workers waits and says why, then starts on a third.
three=$(first_run "$run_yaml" --set resources.nodes=3 --set schedule.epochs=1 --set data.batch_size=42 \
  --set data.train_subset=420 --set name=three-nodes --no-reuse)
why="needs 3 nodes with 1 free CPU slot each on one shared storage; 2 have them"
check "nmctl runs --json says why the 3-node run waits" test "$(run_field "$three" waiting)" = "$why"
check "nmctl runs says it" bash -c "'$nmctl' runs | grep -qF '$why'"
check "nmctl cluster says it" bash -c "'$nmctl' cluster | grep -qF 'run $three waits: $why'"
check "it is still QUEUED" test "$(run_field "$three" state)" = QUEUED
node n4 127.0.0.4
check "the 3-node run starts once a third worker registers, and succeeds" wait_state "$three" SUCCEEDED 300

# --- all or nothing: one node's nmworker SIGKILLed mid-run.
touch "$hold"
cat >"$tmp/node_dies.yaml" <<YAML
name: node-dies
base_file: $run_yaml
max_retries: 2
grid:
  resources.nodes: [2]
  schedule.epochs: [3]
YAML
failing=$(first_run "$tmp/node_dies.yaml" --no-reuse)
check "the ranks reach the hold after epoch 1" wait_log "$failing" "holding after 1 epochs"
read -r node0 node1 < <(run_json "$failing" | json "' '.join(str(m['worker_id']) for m in d['run']['gang']['members'])")
host_of() { ctl workers --json | json "[w['host'] for w in d['workers'] if str(w['id'])=='$1'][0]"; }
victim=$(host_of "$node1"); survivor=$(host_of "$node0")
log "gang of run $failing: node 0 on $survivor, node 1 on $victim; SIGKILL $victim's nmworker"
victim_ranks=$(pgrep -P "${worker_pid[$victim]}" | tr '\n' ' ')
killed_at=$SECONDS
kill -KILL "${worker_pid[$victim]}"
unset "worker_pid[$victim]"
# Node 0's worker stops its ranks when its heartbeat says the attempt is over, or when the retry's assignment
# arrives first (it stops the stale attempt before starting the new one), whichever comes first.
check "node 0's attempt 1 is stopped and ends" bash -c "
  for _ in \$(seq 300); do grep -q 'run $failing attempt 1 ended' '$tmp/nmworker-$survivor.log' && exit 0; sleep 0.1; done; exit 1"
stopped_after=$((SECONDS - killed_at))
check "node 0 stopped within the lease (3 s) + grace (1 s) + kill grace (3 s) + 5 s" test "$stopped_after" -le 12
check "the stop came from the coordinator" grep -qE "coordinator asks to stop run $failing attempt 1|stopping stale attempt 1 of run $failing" "$tmp/nmworker-$survivor.log"
log "node 0 stopped $stopped_after s after node 1's nmworker died (lease 3 s + grace 1 s)"
check "node 1's ranks died with their nmworker" bash -c "
  for _ in \$(seq 300); do ok=1; for r in $victim_ranks; do kill -0 \$r 2>/dev/null && ok=0; done; ((ok)) && exit 0; sleep 0.1; done; exit 1"
for r in $victim_ranks; do kill -KILL "$r" 2>/dev/null; done  # Should any have outlived the check.
rm -f "$hold"
check "attempt 2 resumes on the remaining workers and SUCCEEDS" wait_state "$failing" SUCCEEDED 300
check "it took attempt 2" test "$(run_field "$failing" attempt)" = 2
check "attempt 2 resumed from the checkpoint of epoch 1" bash -c "'$nmctl' logs '$failing' | grep '^\[2:0\]' | grep -q 'resuming from'"
check "the lost attempt says which worker was lost" bash -c "'$nmctl' run '$failing' | grep -q 'worker $node1 lost its lease'"

finish
