#!/usr/bin/env bash
# One run on several nodes (docs/cluster.md, "One run on several nodes") with the real nmserver, nmworker and
# nmtrain (Gloo on the CPU). Each node is an nmworker of one CPU slot on a loopback address of its own
# (--advertise_addr 127.0.0.2, .3, .4), all declaring one shared storage (--storage) for one work directory.
# Checks that
# - a worker advertising a wildcard address (0.0.0.0) is refused at registration, and exits 78 at once;
# - equivalence: a 2-node x 1-rank run equals a 1-node x 2-rank run of the same spec step for step (losses and
#   final metrics within the tolerance below), its ranks meeting at node 0's address; `nmctl run` lists its
#   gang and `nmctl logs` tags its lines by node and rank;
# - a 3-node run with 2 such workers waits, and `nmctl runs` and `nmctl cluster` say why ("needs 3 nodes with
#   1 free CPU slot each on one shared storage; 2 have them"), then starts when a third worker registers;
# - all or nothing, with the ranks held mid-epoch (after step 15 of 30): SIGKILL of one node's nmworker stops
#   the other node's ranks (told in its next heartbeat once the lost worker's lease runs out); SIGKILL of one
#   rank's nmtrain stops the other node's rank within a heartbeat + the kill grace (the time is printed as a
#   "figure:" line); either way the attempt fails as one, and attempt 2 resumes from the checkpoint and ends
#   SUCCEEDED with the final metrics of the same run trained straight through;
# - cancel of a gang held mid-epoch stops every node's ranks; a fork of a 2-node run trains on 2 nodes from its
#   parent's checkpoint;
# - a rendezvous port taken on node 0 hands the attempt back (no retry used), and the run goes on with the
#   range's next port; with every port of the range taken, the run's 50th attempt (one per port) fails
#   instead of being handed back again, naming the range;
# - ASHA early stopping of a gang: the stop reaches both nodes' ranks, and the run ends STOPPED_EARLY.
#
# Usage: multi_node_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN RUN_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
run_yaml=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/multi_node.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"  # One directory for every worker: the "shared storage".
hold="$tmp/hold"  # While it exists, trainers that finished step 15 wait (NMTRAIN_HOLD_FILE).

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

# Step 15 is mid-epoch 2 (10 steps an epoch) and a step-line step (log_every_steps 5): the epoch-1 checkpoint
# is written, and the ranks have just agreed on a sync point.
export NMTRAIN_HOLD_FILE="$hold" NMTRAIN_HOLD_AFTER_STEPS=15
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
# A wildcard address names no host the other nodes could reach: the coordinator refuses the registration.
# The worker does not retry a refused registration: it exits 78 (contract/nmworker_exit_codes.h) at once.
node wildcard 0.0.0.0
wildcard_exit=0
# Until it exits; one still retrying after 20 s is stopped (and the exit code check fails).
timeout 20 tail --pid="${worker_pid[wildcard]}" -f /dev/null || stop_worker "${worker_pid[wildcard]}"
wait "${worker_pid[wildcard]}" || wildcard_exit=$?
unset "worker_pid[wildcard]"
check "a worker advertising 0.0.0.0 is refused, naming the key and value" \
  grep -q "advertise_addr: '0.0.0.0' is the wildcard address" "$tmp/nmworker-wildcard.log"
check "and exits 78 (registration refused) instead of retrying" test "$wildcard_exit" = 78
check "saying it will not retry" grep -q "refused this worker's registration: INVALID_ARGUMENT: .*not retrying" \
  "$tmp/nmworker-wildcard.log"
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
ranks_logged=$(ctl logs "$gang" | grep -c '^\[1:node1/rank1\] ' || true)
check "the gang's log carries rank 1's lines, tagged node 1" test "$ranks_logged" -gt 0
check "and rank 0's, tagged node 0" bash -c "'$nmctl' logs '$gang' | grep -q '^\[1:node0/rank0\] '"

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

# --- the straight run the failure cases are compared with: 2 nodes, 3 epochs, nothing killed.
cat >"$tmp/three_epochs.yaml" <<YAML
name: three-epochs
base_file: $run_yaml
max_retries: 2
grid:
  resources.nodes: [2]
  schedule.epochs: [3]
YAML
straight=$(first_run "$tmp/three_epochs.yaml" --no-reuse --set name=straight)
check "the straight 2-node run succeeds" wait_state "$straight" SUCCEEDED 300
# A run resumed from a checkpoint retrains the lost steps on the same shards in the same order (the data order
# is a function of the seed and the epoch; the checkpoint holds the weights and the optimizer's state in float32
# as they were): it can differ from the straight run only as the equivalence above, a rounding per step.
same_result() {  # same_result RUN: its final metrics agree with the straight run's within steps x 2^-23.
  python3 - "$(finals "$1")" "$(finals "$straight")" "$(curve "$straight")" <<'PY'
import json, sys
fa, fb, curve = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
steps = curve[-1][0]
for k in ('loss', 'top1'):
    if k not in fb or abs(fa.get(k, float('inf')) - fb[k]) > steps * 2.0**-23 * abs(fb[k]) + 1e-6:
        sys.exit(f"final {k}: {fa.get(k)} vs {fb.get(k)} straight")
PY
}
host_of() { ctl workers --json | json "[w['host'] for w in d['workers'] if str(w['id'])=='$1'][0]"; }
gang_hosts() {  # gang_hosts RUN: node 0's and node 1's worker host names.
  local w0 w1
  read -r w0 w1 < <(run_json "$1" | json "' '.join(str(m['worker_id']) for m in d['run']['gang']['members'])")
  echo "$(host_of "$w0") $(host_of "$w1")"
}
# Rank 0 logs its hold after step 15. Rank 1 has then passed step 15's collectives (the gradients' and the
# step-line sync point's) and is held too, or blocked in step 16's all-reduce until rank 0 goes on: mid-epoch 2.
wait_held() { wait_log "$1" "holding after 15 steps"; }
wait_log_file() {  # wait_log_file FILE TEXT: until FILE has a line with TEXT (10 s).
  for _ in $(seq 100); do grep -q "$2" "$1" && return 0; sleep 0.1; done
  return 1
}

# --- all or nothing: one node's nmworker SIGKILLed mid-epoch.
touch "$hold"
failing=$(first_run "$tmp/three_epochs.yaml" --no-reuse --set name=node-dies)
check "the ranks reach the hold at step 15 (mid-epoch 2)" wait_held "$failing"
read -r node0 node1 < <(run_json "$failing" | json "' '.join(str(m['worker_id']) for m in d['run']['gang']['members'])")
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
check "attempt 2 resumed from a checkpoint" bash -c "'$nmctl' logs '$failing' | grep '^\[2:node0/rank0\]' | grep -q 'resuming from'"
check "the lost attempt says which worker was lost" bash -c "'$nmctl' run '$failing' | grep -q 'worker $node1 lost its lease'"
check "it ends with the straight run's result" same_result "$failing"

# --- all or nothing: one rank (an nmtrain process, not its nmworker) SIGKILLed mid-epoch. Its node reports the
# attempt FAILED; the coordinator tells node 0 in its next heartbeat (lease/4 = 750 ms), whose worker stops its
# rank: SIGTERM, SIGKILL after --kill_grace_ms (3 s).
touch "$hold"
rank_dies=$(first_run "$tmp/three_epochs.yaml" --no-reuse --set name=rank-dies)
check "the ranks of the next run reach the hold at step 15" wait_held "$rank_dies"
read -r survivor victim < <(gang_hosts "$rank_dies")
victim_rank=$(pgrep -P "${worker_pid[$victim]}")
survivor_rank=$(pgrep -P "${worker_pid[$survivor]}")
log "run $rank_dies: SIGKILL rank 1 (pid $victim_rank on $victim); rank 0 is pid $survivor_rank on $survivor"
killed_ms=$(now_ms)
kill -KILL "$victim_rank"
stopped_ms=$(until_gone 30 "$survivor_rank")
check "rank 0 on the other node stops" test -n "$stopped_ms"
rank_stop_ms=$((${stopped_ms:-0} - killed_ms))
log "figure: rank 1 SIGKILLed mid-epoch: rank 0 on the other node stopped $rank_stop_ms ms later" \
  "(heartbeat 750 ms + kill grace 3000 ms)"
check "within a heartbeat (750 ms) + the kill grace (3 s) + 5 s (as node 0's check above)" test "$rank_stop_ms" -le 8750
check "node 0 was told by the coordinator" grep -qE "coordinator asks to stop run $rank_dies attempt 1|stopping stale attempt 1 of run $rank_dies" "$tmp/nmworker-$survivor.log"
rm -f "$hold"
check "attempt 2 resumes and SUCCEEDS" wait_state "$rank_dies" SUCCEEDED 300
check "as attempt 2" test "$(run_field "$rank_dies" attempt)" = 2
check "attempt 1 failed for the killed rank" bash -c "'$nmctl' run '$rank_dies' | grep -qF 'rank 1 exited with code 137 (killed (SIGKILL))'"
check "attempt 2 resumed from a checkpoint" bash -c "'$nmctl' logs '$rank_dies' | grep '^\[2:node0/rank0\]' | grep -q 'resuming from'"
check "it ends with the straight run's result" same_result "$rank_dies"

# --- cancel a gang mid-epoch: every node's ranks stop, the run is CANCELLED.
touch "$hold"
cancelled=$(first_run "$tmp/three_epochs.yaml" --no-reuse --set name=cancelled)
check "the ranks of the run to cancel reach the hold at step 15" wait_held "$cancelled"
read -r host0 host1 < <(gang_hosts "$cancelled")
ranks=$(pgrep -P "${worker_pid[$host0]}"; pgrep -P "${worker_pid[$host1]}")
ctl cancel "$cancelled" >/dev/null
check "cancel stops the ranks of both nodes" test -n "$(until_gone 30 $ranks)"
check "the run is CANCELLED" wait_state "$cancelled" CANCELLED 30
rm -f "$hold"

# --- fork a gang run: the fork trains on 2 nodes from the parent's checkpoint.
fork=$(ctl fork "$straight" --set schedule.epochs=4 --json | json "d['run']['id']")
check "the fork of the straight gang run succeeds" wait_state "$fork" SUCCEEDED 300
check "on 2 nodes" test "$(run_json "$fork" | json "len(d['run']['gang']['members'])")" = 2
check "from the parent's checkpoint at step 30" bash -c "'$nmctl' logs '$fork' | grep -q 'forking from .*/runs/$straight/checkpoint.pt.* step 30'"
check "training only epoch 4" test "$(run_json "$fork" | json "min(p['step'] for p in d['metrics'] if p['kind']=='step') > 30 and max(p['step'] for p in d['metrics']) == 40")" = True

# --- a rendezvous port taken on node 0: the coordinator hands out the range's ports in turn, so the next three
# after the fork's are the next three attempts'; another program listens on them. Node 0's worker hands each
# attempt whose port is taken back (no retry used), and the next placement takes the next port: a run of
# max_retries 0 still succeeds, on the fourth.
in_range() { echo $((base + ($1 - base) % 50)); }
last_port=$(run_json "$fork" | json "d['run']['gang']['master_port']")
taken=("$(in_range $((last_port + 1)))" "$(in_range $((last_port + 2)))" "$(in_range $((last_port + 3)))")
python3 - "$tmp/ports_held" "${taken[@]}" <<'PY' &
import socket, sys, time
held = []
for port in sys.argv[2:]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(port)))
    s.listen(1)
    held.append(s)
open(sys.argv[1], "w").close()
time.sleep(3600)
PY
port_holder=$!
check "another program holds rendezvous ports ${taken[*]}" bash -c "
  for _ in \$(seq 100); do test -e '$tmp/ports_held' && exit 0; sleep 0.1; done; exit 1"
cat >"$tmp/port_taken.yaml" <<YAML
name: port-taken
base_file: $run_yaml
max_retries: 0
grid:
  resources.nodes: [2]
  schedule.epochs: [1]
YAML
ported=$(first_run "$tmp/port_taken.yaml" --no-reuse)
check "a 2-node run of max_retries 0 succeeds on the free port" wait_state "$ported" SUCCEEDED 300
check "it met at the port after the taken ones" test "$(run_json "$ported" | json "d['run']['gang']['master_port']")" = "$(in_range $((last_port + 4)))"
check "as attempt 4, after 3 attempts handed back for taken ports" test "$(run_field "$ported" attempt)" = 4
check "the history names a taken port" bash -c "'$nmctl' run '$ported' | grep -q 'rendezvous port ${taken[0]} is taken on node 0'"
kill "$port_holder"
wait "$port_holder" 2>/dev/null

# --- every port of the range taken: the hand-backs stop after as many attempts as the range has ports, and
# the attempt fails (max_retries 0: the run fails), naming the range.
python3 - "$tmp/range_held" "$base" "$((base + 49))" <<'PY' &
import socket, sys, time
held = []
for port in range(int(sys.argv[2]), int(sys.argv[3]) + 1):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("0.0.0.0", port))
        s.listen(1)
        held.append(s)
    except OSError:
        pass  # Another program has it already: taken either way.
open(sys.argv[1], "w").close()
time.sleep(3600)
PY
range_holder=$!
check "another program holds every rendezvous port $base-$((base + 49))" bash -c "
  for _ in \$(seq 100); do test -e '$tmp/range_held' && exit 0; sleep 0.1; done; exit 1"
exhausted=$(first_run "$tmp/port_taken.yaml" --set name=range-taken --no-reuse)
check "a 2-node run whose every port is taken fails instead of going round the range" \
  wait_state "$exhausted" FAILED 120
check "after 50 attempts, one per port of the range" test "$(run_field "$exhausted" attempt)" = 50
check "its message names the range" bash -c "'$nmctl' run '$exhausted' --json | grep -q 'every port of the rendezvous range $base-$((base + 49))'"
kill "$range_holder"
wait "$range_holder" 2>/dev/null

# --- ASHA stops a gang: two 2-node runs of one sweep, one that learns and one that barely moves; rungs at
# epochs 1 and 2. The first reaches rung 1 alone (promoted), is let go at its hold and finishes; the second
# is stopped after its rung-1 result (epoch 1, step 10): at the latest at its hold after step 15, so it cannot
# train to the end before the stop reaches both nodes.
cat >"$tmp/asha.yaml" <<YAML
name: asha-gang
base_file: $run_yaml
max_retries: 0
grid:
  optimizer.lr: [0.003, 1.0e-7]
  resources.nodes: [2]
  schedule.epochs: [3]
early_stopping: {policy: asha, metric: top1, mode: max, resource: epoch, min_resource: 1, reduction_factor: 2}
YAML
touch "$hold"
asha_sweep=$(ctl submit "$tmp/asha.yaml" --no-reuse --json | json "d['sweep']['id']")
read -r learns barely < <(ctl runs --sweep "$asha_sweep" --json | json "' '.join(str(r['id']) for r in sorted(d['runs'], key=lambda r: r['id']))")
check "the first ASHA gang run reaches its hold (past rung 1)" wait_held "$learns"
rm -f "$hold"
check "and is let go" wait_log "$learns" "hold released"
touch "$hold"
check "the first run succeeds" wait_state "$learns" SUCCEEDED 300
check "ASHA stops the second: STOPPED_EARLY at rung 1" wait_state "$barely" STOPPED_EARLY 120
check "saying why" bash -c "'$nmctl' run '$barely' | grep -q 'asha: rung 1 (epoch 1): top1 .*< cutoff'"
read -r host0 host1 < <(gang_hosts "$barely")
for h in "$host0" "$host1"; do
  check "the stop reached $h's nmworker" grep -qE "coordinator asks to stop run $barely attempt 1|stopping stale attempt 1 of run $barely" "$tmp/nmworker-$h.log"
  check "and its ranks ended" wait_log_file "$tmp/nmworker-$h.log" "run $barely attempt 1 ended"
done
rm -f "$hold"

finish
