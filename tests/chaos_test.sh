#!/usr/bin/env bash
# The chaos suite: faults injected at random moments into the real nmserver, nmworker and nmtrain on loopback
# (a real SQLite file, tiny runs), each case ending with the same checks: every run SUCCEEDED exactly once
# (one final metric point each, no run lost or added), `PRAGMA integrity_check` says ok, and no trainer process
# is left. The cases:
#   1. the coordinator SIGKILLed three times mid-sweep, at random moments, and restarted on the same database;
#   2. a worker SIGKILLed mid-run (its ranks die with it; the run resumes elsewhere from its checkpoint);
#   3. one rank of a two-rank run SIGKILLed (the agent stops the other; the retry resumes);
#   4. a worker and its ranks SIGSTOPped past the lease, then SIGCONTed (the late attempt is fenced);
#   5. the database's filesystem full (root: a tmpfs with size=) while a sweep's runs end: a submission is
#      refused with a clear error and leaves no trace; once space is back every run SUCCEEDED at its first
#      attempt (no retries allowed) with every metric point its trainer printed; without root, a read-only
#      database refused at start with a clear error instead;
#   6. the latest checkpoint of an interrupted run damaged: the retry falls back to the previous one;
#   7. a run nmtrain refuses for good (its directory holds another seed's checkpoint, as a stale work dir
#      would): FAILED at its first attempt with nmtrain's reason, its retries unspent.
# Runs are held at a known point where a fault must land mid-run: every worker starts its trainers with
# NMTRAIN_HOLD_FILE, and a trainer that has finished two epochs waits while that file exists (docs/testing.md).
# tests/service_e2e_test.sh has the functional cases (one kill or freeze each at a chosen moment); these add
# random timing, repeated faults and the invariant checks after each.
#
# Usage: chaos_test.sh NMSERVER NMWORKER NMCTL NMTRAIN SWEEP_YAML
# NMSPARSE_CHAOS_SEED fixes the random moments (printed at the start, to replay a failure); NMSPARSE_CHAOS_CASES
# picks cases ("3 6"). On failure the logs, run directories and database are kept and their place printed.
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
sweep_yaml=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/chaos.XXXXXX")
work="$tmp/work"  # Shared by the workers, as a shared filesystem would be: a requeued run resumes from it.
seed=${NMSPARSE_CHAOS_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"
log "seed $seed (NMSPARSE_CHAOS_SEED=$seed replays these moments)"

# The database lives on a small filesystem of its own when we may mount one (case 5 fills it).
dbfs="$tmp/dbfs"
mkdir -p "$dbfs"
mounted=0
if [[ $(id -u) == 0 ]] && mount -t tmpfs -o size=48m nmsparse-chaos "$dbfs" 2>/dev/null; then mounted=1; fi
db="$dbfs/nmsparse.db"
chaos_cleanup() {
  cleanup
  if ((failures > 0)); then
    cp "$dbfs"/nmsparse.db* "$tmp/" 2>/dev/null
    log "logs, run directories and the database kept in $tmp"
  fi
  ((mounted)) && umount -l "$dbfs"
  ((failures > 0)) || rm -rf "$tmp"
}
trap chaos_cleanup EXIT

# The trainer the workers start: nmtrain itself, with its stdout also appended to <run dir>/stdout.<RANK>, so that
# what it printed can be compared with what the coordinator stored. tee ignores SIGTERM (a rank stopped by its
# agent still prints its last lines) and ends when nmtrain closes its stdout.
trainer="$tmp/nmtrain-tee"
cat >"$trainer" <<EOF
#!/usr/bin/env bash
out=.; prev=
for a in "\$@"; do [[ \$prev == --out ]] && out=\$a; prev=\$a; done
exec "$nmtrain" "\$@" > >(trap '' TERM; exec tee -a "\$out/stdout.\${RANK:-0}")
EOF
chmod +x "$trainer"
hold="$tmp/hold"  # While it exists, trainers that have finished two epochs wait (NMTRAIN_HOLD_FILE).

start_worker() {  # start_worker NAME SLOTS
  # NMSPARSE_TOKEN: a worker's credential, which must not reach its trainers (this coordinator needs none).
  NMTRAIN_HOLD_FILE="$hold" NMTRAIN_HOLD_AFTER_EPOCHS=2 NMSPARSE_TOKEN=chaos-worker-secret \
    "$nmworker" --coordinator="$NMSPARSE_COORDINATOR" --work_dir="$work" --trainer="$trainer" --cpu-slots="$2" \
    --host="$1" --kill_grace_ms=3000 >>"$tmp/nmworker-$1.log" 2>&1 &
  worker_pid[$1]=$!
}

pause() {  # pause MIN_MS MAX_MS: a random moment between the two.
  local ms=$(($1 + RANDOM % ($2 - $1 + 1)))
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
}

submit() {  # submit NAME EPOCHS [more nmctl submit arguments]: prints the sweep id.
  local name=$1 epochs=$2
  shift 2
  ctl submit "$sweep_yaml" --set name="chaos-$name" --set schedule.epochs="$epochs" --no-reuse --json "$@" |
    json "d['sweep']['id']"
}

run_ids() { ctl runs --sweep "$1" --json | json "' '.join(str(r['id']) for r in d['runs'])"; }
epoch_points() { ctl run "$1" --json | json "sum(1 for p in d['metrics'] if p['kind']=='epoch')"; }
attempt_of() { ctl run "$1" --json | json "d['run']['attempt']"; }
# "final" points of the run's last (succeeded) attempt. An earlier attempt that printed its final line and then
# failed (a rank killed while exiting) keeps its points, tagged with its attempt, as history.
last_attempt_finals() {
  ctl run "$1" --json |
    json "sum(1 for p in d['metrics'] if p['kind']=='final' and int(p.get('attempt',0))==int(d['run']['attempt']))"
}

wait_epochs() {  # wait_epochs RUN N: until the run reported N epoch points.
  [[ -n "$1" ]] || return 1
  for _ in $(seq 600); do
    [[ "$(epoch_points "$1")" -ge "$2" ]] && return 0
    sleep 0.2
  done
  return 1
}

# The metric points (kind, epoch, step) rank 0 printed (stdout.0 holds every attempt's: for a run of one attempt)
# against those the coordinator stored for the run's current attempt (of the progress points, the last one);
# says how many of each.
points_match() {  # points_match RUN
  ctl run "$1" --json | python3 -c "
import json, sys
run = json.load(sys.stdin)
attempt = int(run['run']['attempt'])
key = lambda p: (p['kind'], int(p.get('epoch', 0)), int(p.get('step', 0)))
stored = sorted(key(p) for p in run['metrics'] if int(p.get('attempt', 0)) == attempt)
printed = []
progress = None
for line in open(sys.argv[1]):
    try:
        p = json.loads(line)
    except ValueError:
        continue
    if isinstance(p, dict) and p.get('kind') in ('epoch', 'step', 'final'):
        printed.append(key(p))
    elif isinstance(p, dict) and p.get('kind') == 'progress':
        progress = key(p)  # The store keeps the attempt's latest progress point only.
if progress is not None:
    printed.append(progress)
printed.sort()
print('e2e: run %s: %d metric points printed, %d stored' % (sys.argv[2], len(printed), len(stored)), file=sys.stderr)
sys.exit(0 if printed and printed == stored else 1)" "$work/runs/$1/stdout.0" "$1"
}

ranks_of() { pgrep -P "${worker_pid[$1]}" | tr '\n' ' '; }
all_gone() {  # all_gone PID...: within 15 s (none given is a failure: there was nothing to watch).
  [[ $# -gt 0 ]] || return 1
  for _ in $(seq 150); do
    kill -0 "$@" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}

integrity_ok() {
  [[ "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])" "$db")" == ok ]]
}
no_trainer_left() {  # No nmtrain process at all within SECONDS (default 10): each case ends all its runs.
  for _ in $(seq $((${1:-10} * 10))); do
    pgrep -f -- "^$nmtrain " >/dev/null || return 0
    sleep 0.1
  done
  pgrep -af -- "^$nmtrain " >&2
  return 1
}

check_outcome() {  # check_outcome CASE SWEEP RUNS: the checks every case ends with.
  local name=$1 sweep=$2 runs=$3
  check "$name: every run succeeds" wait_runs "$sweep" "all(r['state']=='SUCCEEDED' for r in runs)" 300
  check "$name: $runs runs, none lost or added" \
    test "$(ctl runs --sweep "$sweep" --json | json "len(d['runs'])")" = "$runs"
  local finals
  for r in $(run_ids "$sweep"); do
    finals=$(last_attempt_finals "$r")
    check "$name: run $r's succeeded attempt has exactly one final point (it has $finals)" test "$finals" = 1
  done
  check "$name: integrity_check ok" integrity_ok
  check "$name: no trainer left" no_trainer_left
}

case_started=$SECONDS
case_time() { log "case $1 took $((SECONDS - case_started)) s"; case_started=$SECONDS; }

start_server 0
port=${address##*:}
start_worker w1 2
start_worker w2 1
# Both registered before anything is submitted: a two-rank run is refused while no worker has two slots.
for _ in $(seq 100); do
  [[ "$(ctl workers --json 2>/dev/null | json "len(d['workers'])" 2>/dev/null)" == 2 ]] && break
  sleep 0.1
done

# --- 1. the coordinator SIGKILLed three times at random moments mid-sweep, restarted on the same database
case_1() {
  s1=$(submit coord-a 4)
  s2=$(submit coord-b 4)
  check "1: sweeps submitted" test -n "$s1" -a -n "$s2"
  for k in 1 2 3; do
    pause 1500 5000
    log "1: SIGKILL nmserver ($k of 3)"
    kill -KILL "$server_pid"
    wait "$server_pid" 2>/dev/null
    pause 200 1500
    start_server "$port"
  done
  check_outcome 1 "$s1" 2
  check_outcome 1 "$s2" 2
}

# --- 2. a worker SIGKILLed mid-run; its ranks die with it, and the run resumes from its checkpoint
case_2() {
  s=$(submit worker-kill 60)  # Long enough to be mid-run at the kill on an idle VM (10 epochs took 3 s).
  run=$(run_ids "$s" | cut -d' ' -f1)
  check "2: the run reports an epoch" wait_epochs "$run" 1
  pause 0 500
  victim=$(holder_of "$run")
  ranks=$(ranks_of "$victim")
  log "2: SIGKILL worker $victim (pid ${worker_pid[$victim]}, ranks $ranks) running run $run"
  kill -KILL "${worker_pid[$victim]}"
  wait "${worker_pid[$victim]}" 2>/dev/null
  check "2: the killed worker's ranks end" all_gone $ranks
  start_worker "$victim" "$([[ $victim == w1 ]] && echo 2 || echo 1)"
  check_outcome 2 "$s" 2
  check "2: the killed run took another attempt" test "$(attempt_of "$run")" -ge 2
}

# --- 3. one rank of a two-rank run SIGKILLed: the agent stops the other, the retry resumes
case_3() {
  s=$(submit rank-kill 60 --set resources.gpus=2)  # Long enough (about 0.5 s an epoch on an idle VM) that
  # the rank is killed mid-run: 12 epochs could end before the kill on a quiet machine.
  run=$(run_ids "$s" | cut -d' ' -f1)
  check "3: the two-rank run reports an epoch" wait_epochs "$run" 1
  pause 0 500
  rank1=""
  for p in $(ranks_of w1); do  # Rank 1 of this run (the sweep's other run may have started meanwhile).
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "--out $work/runs/$run " || continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'RANK=1' && rank1=$p
  done
  check "3: rank 1 found" test -n "$rank1"
  check "3: the worker's token is not in its trainers' environment" \
    bash -c "! tr '\\0' '\\n' </proc/$rank1/environ | grep -q '^NMSPARSE_TOKEN='"
  rank0=""
  for p in $(ranks_of w1); do
    [[ $p != "$rank1" ]] && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "--out $work/runs/$run " &&
      rank0+="$p "
  done
  log "3: SIGKILL rank 1 (pid $rank1) of run $run; rank 0: $rank0"
  kill -KILL "$rank1"
  check "3: the other rank is stopped" all_gone $rank0
  check_outcome 3 "$s" 2
  check "3: the run took another attempt" test "$(attempt_of "$run")" -ge 2
  check "3: the retry resumed from a checkpoint" bash -c "'$nmctl' logs '$run' | grep -q 'resuming from'"
}

# --- 4. a worker and its ranks frozen past the lease, then thawed: the late attempt is fenced
case_4() {
  s=$(submit freeze 60)  # Long enough to be frozen mid-run on an idle VM (15 epochs took 3 s).
  run=$(run_ids "$s" | cut -d' ' -f1)
  check "4: the run reports an epoch" wait_epochs "$run" 1
  pause 0 500
  frozen=$(holder_of "$run")
  ranks=$(ranks_of "$frozen")
  log "4: SIGSTOP worker $frozen (pid ${worker_pid[$frozen]}, ranks $ranks)"
  kill -STOP "${worker_pid[$frozen]}" $ranks
  check "4: the run moves to another attempt" wait_runs "$s" \
    "[int(r['attempt']) for r in runs if str(r['id'])=='$run'][0] >= 2" 60
  pause 0 3000
  kill -CONT "${worker_pid[$frozen]}" $ranks
  log "4: SIGCONT worker $frozen"
  check "4: the late attempt's ranks are stopped" all_gone $ranks
  check "4: the thawed worker was told its attempt is stale" \
    grep -qE "asks to stop|refused by the coordinator" "$tmp/nmworker-$frozen.log"
  check_outcome 4 "$s" 2
}

# --- 5. the database's disk full while runs end (or, without root, a read-only database at start)
case_5() {
  if ((mounted)); then
    # No retries: a run requeued once space is back (its completion lost, or its lease run out) would fail.
    sed 's/^max_retries: .*/max_retries: 0/' "$sweep_yaml" >"$tmp/no_retries.yaml"
    touch "$hold"
    s=$(ctl submit "$tmp/no_retries.yaml" --set name=chaos-disk-full --set schedule.epochs=6 \
      --set schedule.log_every_steps=2 --no-reuse --json |
      json "d['sweep']['id']")
    runs=$(run_ids "$s")
    for r in $runs; do check "5: run $r is held after two epochs" wait_log "$r" "holding after 2 epochs"; done
    sweeps_before=$(ctl sweeps --json | json "len(d['sweeps'])")
    # The write-ahead log first shrunk to nothing, so that the next write must allocate (SQLite reuses a log's
    # space once it has been checkpointed), then every free block taken.
    python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" "$db"
    dd if=/dev/zero of="$dbfs/filler" bs=64k 2>/dev/null
    log "5: $db's filesystem is full ($(df --output=avail -k "$dbfs" | tail -1) KiB left)"
    ctl submit "$sweep_yaml" --set name=chaos-refused --no-reuse >/dev/null 2>"$tmp/full.err"
    rc=$?
    check "5: a submission on a full disk fails" test "$rc" -ne 0
    check "5: saying the database is full" grep -qi "full" "$tmp/full.err"
    rm -f "$hold"
    log "5: trainers released: their last epochs, final lines and exits meet the full disk"
    check "5: every trainer ended while the disk was full" no_trainer_left 300
    check "5: the workers kept the reports the coordinator could not store" \
      grep -q "did not take a report" "$tmp"/nmworker-w1.log "$tmp"/nmworker-w2.log
    # Full for longer than a lease and its grace (3 s + 1 s) after the runs ended: long enough for the lease
    # check to requeue them, were their workers' silence counted against them.
    sleep 5
    check "5: nmserver is still up" kill -0 "$server_pid"
    rm -f "$dbfs/filler"
    log "5: space is back"
    check "5: the refused submission left no trace" \
      test "$(ctl sweeps --json | json "len(d['sweeps'])")" = "$sweeps_before"
    check_outcome 5 "$s" 2
    for r in $runs; do
      check "5: run $r SUCCEEDED at its first attempt" test "$(attempt_of "$r")" = 1
      check "5: run $r stored every metric point its trainer printed, once" points_match "$r"
    done
  else
    sweeps_before=$(ctl sweeps --json | json "len(d['sweeps'])")
    stop_pid "$server_pid"
    wait "$server_pid" 2>/dev/null
    chmod a-w "$db" "$dbfs"
    "$nmserver" --listen="127.0.0.1:$port" --db="$db" >"$tmp/nmserver-readonly.log" 2>&1
    rc=$?
    chmod u+w "$db" "$dbfs"
    check "5: nmserver refuses a read-only database" test "$rc" -ne 0
    check "5: naming it" grep -q "$db" "$tmp/nmserver-readonly.log"
    start_server "$port"
    check "5: nothing stored before is lost" test "$(ctl sweeps --json | json "len(d['sweeps'])")" = "$sweeps_before"
    check "5: integrity_check ok" integrity_ok
  fi
}

# --- 6. the latest checkpoint of an interrupted run damaged: the retry falls back to the previous one
case_6() {
  touch "$hold"  # The run waits after two epochs (two checkpoints) until its worker is killed.
  s=$(submit bad-checkpoint 12)
  run=$(run_ids "$s" | cut -d' ' -f1)
  check "6: the run is held after two epochs (two checkpoints)" wait_log "$run" "holding after 2 epochs"
  victim=$(holder_of "$run")
  ranks=$(ranks_of "$victim")
  log "6: SIGKILL worker $victim running run $run"
  kill -KILL "${worker_pid[$victim]}"
  wait "${worker_pid[$victim]}" 2>/dev/null
  check "6: its ranks end (writing a stop checkpoint)" all_gone $ranks
  check "6: a previous checkpoint exists" test -f "$work/runs/$run/checkpoint.prev.pt"
  truncate -s 1000 "$work/runs/$run/checkpoint.pt"
  log "6: $work/runs/$run/checkpoint.pt truncated"
  rm -f "$hold"  # The sweep's other run goes on; the retry is not held.
  start_worker "$victim" "$([[ $victim == w1 ]] && echo 2 || echo 1)"
  check_outcome 6 "$s" 2
  check "6: the run took another attempt" test "$(attempt_of "$run")" -ge 2
  check "6: the retry fell back to the previous checkpoint" \
    bash -c "'$nmctl' logs '$run' | grep -q 'falling back to the previous checkpoint'"
}

# --- 7. a run nmtrain refuses for good: FAILED at its first attempt with the reason, its retries unspent
case_7() {
  donor=$(submit donor 1)
  check "7: a one-epoch sweep succeeds" wait_runs "$donor" "all(r['state']=='SUCCEEDED' for r in runs)" 300
  seed0=$(ctl runs --sweep "$donor" --json | json "[r['id'] for r in d['runs'] if r['labels']['seed']=='0'][0]")
  last=$(ctl runs --json | json "max(int(r['id']) for r in d['runs'])")
  # The next sweep's second run (seed 1) gets id last+2; its directory already holds seed 0's checkpoint.
  stale=$((last + 2))
  mkdir -p "$work/runs/$stale"
  cp "$work/runs/$seed0/checkpoint.pt" "$work/runs/$stale/"
  s=$(submit stale-dir 2)  # max_retries 4
  check "7: the planted directory is the seed-1 run's" test "$(ctl runs --sweep "$s" --json |
    json "[r['id'] for r in d['runs'] if r['labels']['seed']=='1'][0]")" = "$stale"
  check "7: the refused run ends FAILED" wait_runs "$s" \
    "[r['state'] for r in runs if str(r['id'])=='$stale'][0]=='FAILED'" 300
  check "7: at its first attempt" test "$(attempt_of "$stale")" = 1
  ctl run "$stale" --json | json "d['run']['message']" >"$tmp/refused.msg"
  check "7: not retried, with nmtrain's reason" bash -c \
    "grep -q 'exit code 2, bad spec: not retried' '$tmp/refused.msg' && grep -q 'seed 1 differs from the checkpoint' '$tmp/refused.msg'"
  check "7: the sweep's other run succeeds" wait_runs "$s" \
    "[r['state'] for r in runs if str(r['id'])!='$stale'][0]=='SUCCEEDED'" 300
  check "7: no trainer left" no_trainer_left
}

# NMSPARSE_CHAOS_CASES picks cases (for example "3 6"); all seven by default.
for c in ${NMSPARSE_CHAOS_CASES:-1 2 3 4 5 6 7}; do
  "case_$c"
  case_time "$c"
done
finish
