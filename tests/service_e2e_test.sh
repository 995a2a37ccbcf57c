#!/usr/bin/env bash
# End to end: the real nmserver, nmworker and nmtrain on loopback with a real SQLite file, driven by nmctl.
# Covers: submit -> runs complete -> metrics, best, compare and export through nmctl --json; idempotent
# resubmission; reuse of identical runs; invalid specs rejected with nothing stored; cancel; a worker SIGKILLed
# mid-run (its run is requeued and resumed from its checkpoint on another worker, final metrics once); the
# coordinator killed and restarted mid-sweep (nothing lost or duplicated); a stale attempt refused (a frozen
# worker whose run moved on is told to stop).
#
# Also: a sweep with a semi_structured section (accelerated 2:4 linears) reaches the trainer, whose per-layer
# decisions `nmctl run` lists.
#
# Usage: service_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN SWEEP_YAML INVALID_YAML SEMI_STRUCTURED_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "${NMSPARSE_E2E_TRAINER:-$4}")
sweep_yaml=$(realpath "$5"); invalid_yaml=$(realpath "$6"); semi_yaml=$(realpath "$7")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/e2e.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"  # Shared by the workers, as a shared filesystem would be: a requeued run resumes from it.
hold="$tmp/hold"  # While it exists, a trainer that has finished two epochs waits (NMTRAIN_HOLD_FILE).
export NMSPARSE_SHARED="${NMSPARSE_SHARED:-}"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

export NMTRAIN_HOLD_FILE="$hold" NMTRAIN_HOLD_AFTER_EPOCHS=2  # Read by every worker's trainers.
start_worker() { start_cpu_worker "$@" --kill_grace_ms=3000; }

# --- every program answers --version with the one release of common/version.h, and --help with exit 0
version=$("$nmctl" --version | awk '{print $3}')
check "nmctl --version names a release" test -n "$version"
for program in "$nmserver" "$nmworker" "$nmctl" "$nmtrain"; do
  name=$(basename "$program")
  check "$name --version prints $version" test "$("$program" --version)" = "$name (nmsparse) $version"
  check "$name --help exits 0" bash -c "'$program' --help >/dev/null"
done
check "nmctl submit --help shows submit's options" bash -c "'$nmctl' submit --help | grep -q -- '--idempotency-key K'"

start_server 0
port=${address##*:}
start_worker w1

# --- submit -> runs complete -> metrics and best via nmctl --json
sweep=$(ctl submit "$sweep_yaml" --idempotency-key e2e-1 --json | json "d['sweep']['id']")
check "submit returns a sweep id" test -n "$sweep"
check "ids are JSON numbers" test "$(ctl runs --sweep "$sweep" --json | json "all(type(r['id']) is int and type(r['sweep_id']) is int for r in d['runs'])")" = True
check "runs of sweep $sweep succeed" wait_runs "$sweep" "all(r['state']=='SUCCEEDED' for r in runs)" 300
check "follow ends with 0 for a succeeded sweep" ctl follow "$sweep"
check "every run has final top1" test "$(ctl runs --sweep "$sweep" --json | json "all('top1' in r['final_metrics'] for r in d['runs'])")" = True
first_run=$(ctl runs --sweep "$sweep" --json | json "d['runs'][0]['id']")
check "run has epoch metric points" test "$(ctl run "$first_run" --json | json "sum(1 for p in d['metrics'] if p['kind']=='epoch')")" -ge 2
check "run has one final point" test "$(final_points "$first_run")" = 1
check "best returns a run with top1" test "$(ctl best "$sweep" --metric top1 --json | json "'top1' in d['runs'][0]['final_metrics']")" = True
check "compare shows both recipes" bash -c "'$nmctl' compare '$sweep' --metric top1 | grep -q dense && '$nmctl' compare '$sweep' | grep -q srste_2_4"
ctl compare "$sweep" --metric acc 2>"$tmp/acc.err" >/dev/null; rc=$?
check "compare with a metric no run reports exits 2" test "$rc" = 2
check "and names the metrics the runs report" grep -q "no succeeded run reports 'acc'; they report .*top1" "$tmp/acc.err"
check "compare --json keeps rows and columns in order" test "$(ctl compare "$sweep" --json | json "[r['label'] for r in d['rows']] == ['dense', 'srste_2_4'] and type(d['sweep_id']) is int")" = True
# The deployable top-1 (issue 39): SR-STE is hard-masked while it trains, so its exported model is its trained
# one; compare and best show it beside top1 and say which top-1 is which; dense runs report theirs too.
check "every run has final deploy_top1" test "$(ctl runs --sweep "$sweep" --json | json "all('deploy_top1' in r['final_metrics'] for r in d['runs'])")" = True
check "SR-STE's deploy_top1 is its top1" test "$(ctl runs --sweep "$sweep" --json | json "all(r['final_metrics']['deploy_top1'] == r['final_metrics']['top1'] for r in d['runs'])")" = True
ctl compare "$sweep" >"$tmp/compare.out"
check "compare shows the deployable top-1 beside top1" grep -q "deploy_top1" "$tmp/compare.out"
check "and says which top-1 is which" grep -q "^deploy_top1: the deployable model.*; top1: the trained weights" "$tmp/compare.out"
ctl best "$sweep" >"$tmp/best.out"
check "best shows deploy_top1 beside top1 and how to rank by it" bash -c "grep -q 'top1 .*deploy_top1' '$tmp/best.out' && grep -q -- '--metric deploy_top1' '$tmp/best.out'"
check "best ranks by deploy_top1" test "$(ctl best "$sweep" --metric deploy_top1 -k 2 --json | json "len(d['runs'])")" = 2
check "export csv has a header and two rows" test "$(ctl export "$sweep" --format csv | wc -l)" = 3
check "watch of a succeeded run exits 0" ctl watch "$first_run"
ctl watch "$first_run" >"$tmp/watch.out"
check "watch shows the step total (500 images / 50 per batch x 2 epochs)" grep -q "20/20 steps" "$tmp/watch.out"
check "watch draws no terminal control codes into a file" bash -c "! grep -q \$'\\x1b' '$tmp/watch.out'"
check "FLOPs are human-formatted" bash -c "! grep -Eq 'flops=[0-9]{6,}' '$tmp/watch.out'"
check "logs of a run are readable" ctl logs "$first_run"

# --- idempotent resubmission: the same key returns the first sweep, nothing new is stored
again=$(ctl submit "$sweep_yaml" --idempotency-key e2e-1 --json)
check "same idempotency key returns the same sweep" test "$(echo "$again" | json "d['sweep']['id']")" = "$sweep"
check "and says it existed" test "$(echo "$again" | json "d['existing']")" = True
check "still one sweep" test "$(ctl sweeps --json | json "len(d['sweeps'])")" = 1

# --- dedupe: identical runs in a new sweep reuse the succeeded results
reuse=$(ctl submit "$sweep_yaml" --json | json "d['sweep']['id']")
check "identical runs are reused" wait_runs "$reuse" "all(r['state']=='SUCCEEDED' and int(r['reused_from'])>0 for r in runs)" 10

# --- accelerated 2:4: the semi_structured section travels from nmctl to nmtrain (v1.SemiStructuredSpec); on a
# CPU worker the chosen linears run masked dense and say so, and nmctl run lists each one's decision
semi=$(ctl submit "$semi_yaml" --json | json "d['sweep']['id']")
check "the semi_structured sweep succeeds" wait_runs "$semi" "all(r['state']=='SUCCEEDED' for r in runs)" 120
semi_run=$(ctl runs --sweep "$semi" --json | json "d['runs'][0]['id']")
ctl run "$semi_run" >"$tmp/semi_run.out"
check "the run's spec carries the section" grep -q "^semi_structured:" "$tmp/semi_run.out"
check "nmctl run lists each chosen layer's decision" grep -q "blocks.1.mlp.fc1: weight_2:4 masked dense (" "$tmp/semi_run.out"
check "and no layer the section did not choose" bash -c "! grep -q 'mlp.fc2: weight_2:4' '$tmp/semi_run.out'"

# --- invalid specs are rejected and leave no trace
sweeps_before=$(ctl sweeps --json | json "len(d['sweeps'])")
ctl submit "$invalid_yaml" 2>"$tmp/invalid.err"; rc=$?
check "an invalid spec exits 2" test "$rc" = 2
check "the error names file, line and key" grep -q "e2e_invalid_sweep.yaml:[0-9]*: sparsity.n_sparsity" "$tmp/invalid.err"
ctl submit "$sweep_yaml" --set data.train_subset=16 --set data.batch_size=32 --no-reuse 2>"$tmp/batch.err"; rc=$?
check "a batch larger than the training subset is refused at submit (exit 2)" test "$rc" = 2
check "naming the batch and the subset" grep -q "data.batch_size: value 32 is larger than the 16 training images" "$tmp/batch.err"
ctl submit "$sweep_yaml" --set resources.gpus=4 --no-reuse 2>"$tmp/toobig.err"; rc=$?
check "a run that can never fit is refused by the coordinator (exit 2)" test "$rc" = 2
check "nothing was stored" test "$(ctl sweeps --json | json "len(d['sweeps'])")" = "$sweeps_before"

# --- cancel a running run
long=$(ctl submit "$sweep_yaml" --set schedule.epochs=200 --set name=e2e-cancel --no-reuse --json | json "d['sweep']['id']")
check "long run starts" wait_runs "$long" "any(r['state']=='RUNNING' for r in runs)" 60
running=$(ctl runs --sweep "$long" --state running --json | json "d['runs'][0]['id']")
ctl cancel "$running" >/dev/null
check "cancelled run ends CANCELLED" wait_runs "$long" "[r['state'] for r in runs if r['id']==$running][0]=='CANCELLED'" 30
ctl watch "$running" >/dev/null; rc=$?
check "watch of a cancelled run exits 4" test "$rc" = 4
ctl cancel "$running" >"$tmp/recancel.out" 2>&1; rc=$?
check "cancelling it again exits 0" test "$rc" = 0
check "and says it had already ended" grep -q "run $running had already ended CANCELLED; nothing to cancel" "$tmp/recancel.out"
ctl cancel --sweep "$long" >/dev/null
check "the sweep's other run is cancelled" wait_runs "$long" "all(r['state']=='CANCELLED' for r in runs)" 30
sleep 0.5
check "no trainer of the cancelled runs is left" bash -c "! pgrep -f -- '--out $work/runs/$running\$' >/dev/null"

# --- a worker SIGKILLed mid-run: the run is requeued and resumed from its checkpoint on another worker
start_worker w2
touch "$hold"  # The run waits after two checkpointed epochs until its worker is killed, however fast it trains.
kill_sweep=$(ctl submit "$sweep_yaml" --set schedule.epochs=30 --set name=e2e-kill --no-reuse --json | json "d['sweep']['id']")
kill_run=$(ctl runs --sweep "$kill_sweep" --json | json "d['runs'][0]['id']")
check "run to kill is held after two checkpointed epochs" wait_log "$kill_run" "holding after 2 epochs"
victim=$(holder_of "$kill_run")
log "SIGKILL worker $victim (pid ${worker_pid[$victim]}) running run $kill_run"
kill -KILL "${worker_pid[$victim]}"
unset "worker_pid[$victim]"
rm -f "$hold"  # The sweep's other run and the retry are not held.
check "killed worker's run succeeds after requeue" wait_runs "$kill_sweep" "all(r['state']=='SUCCEEDED' for r in runs)" 300
check "it took another attempt" test "$(ctl run "$kill_run" --json | json "d['run']['attempt']")" -ge 2
check "the retry resumed from a checkpoint" bash -c "'$nmctl' logs '$kill_run' | grep -q 'resuming from'"
check "final metrics recorded once" test "$(final_points "$kill_run")" = 1
[[ -z "${worker_pid[w1]:-}" ]] && start_worker w1
[[ -z "${worker_pid[w2]:-}" ]] && start_worker w2

# --- coordinator killed and restarted mid-sweep: nothing lost or duplicated
restart_sweep=$(ctl submit "$sweep_yaml" --set schedule.epochs=4 --set name=e2e-restart --no-reuse --json | json "d['sweep']['id']")
check "sweep runs before the restart" wait_runs "$restart_sweep" "any(r['state']=='RUNNING' for r in runs)" 60
kill -KILL "$server_pid"
log "nmserver SIGKILLed"
sleep 2
start_server "$port"
check "sweep completes after the restart" wait_runs "$restart_sweep" "all(r['state']=='SUCCEEDED' for r in runs)" 300
check "no run lost or added" test "$(ctl runs --sweep "$restart_sweep" --json | json "len(d['runs'])")" = 2
for r in $(ctl runs --sweep "$restart_sweep" --json | json "' '.join(str(r['id']) for r in d['runs'])"); do
  check "run $r has one final point" test "$(final_points "$r")" = 1
done

# --- stale attempt refused: a frozen worker loses its run, comes back, and is told to stop
stale_sweep=$(ctl submit "$sweep_yaml" --set schedule.epochs=20 --set name=e2e-stale --no-reuse --json | json "d['sweep']['id']")
stale_run=$(ctl runs --sweep "$stale_sweep" --json | json "d['runs'][0]['id']")
check "run to freeze starts" wait_runs "$stale_sweep" "any(r['id']==$stale_run and r['state']=='RUNNING' for r in runs)" 60
frozen=$(holder_of "$stale_run")
frozen_pid=${worker_pid[$frozen]}
ranks=$(pgrep -P "$frozen_pid" | tr '\n' ' ')
log "SIGSTOP worker $frozen (pid $frozen_pid, ranks $ranks)"
kill -STOP "$frozen_pid" $ranks
check "frozen worker's run moves to another attempt" wait_runs "$stale_sweep" \
  "[int(r['attempt']) for r in runs if r['id']==$stale_run][0] >= 2" 60
kill -CONT "$frozen_pid" $ranks
check "the stale attempt's ranks are stopped" bash -c "for i in \$(seq 100); do kill -0 $ranks 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
check "the frozen worker was told to stop its attempt" grep -qE "asks to stop|refused by the coordinator" "$tmp/nmworker-$frozen.log"
check "the moved run succeeds" wait_runs "$stale_sweep" "all(r['state']=='SUCCEEDED' for r in runs)" 300
check "moved run has one final point" test "$(final_points "$stale_run")" = 1

finish
