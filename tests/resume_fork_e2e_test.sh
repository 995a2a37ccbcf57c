#!/usr/bin/env bash
# Resume and fork end to end (docs/nmctl.md, "Resume and fork"): the real nmserver with a real SQLite file,
# a real nmworker and the real nmtrain on loopback, the nano ViT on 400 Fashion-MNIST images. Checks that
# - a run cancelled mid-training and then `nmctl resume`d goes back to QUEUED, finishes SUCCEEDED as attempt 2,
#   and its trainer resumed from the checkpoint at the step where it stopped (never "starting fresh"); a
#   resubmission of its spec instead (a new run, starting fresh) is told that `nmctl resume` would continue it;
# - `nmctl fork` of that SUCCEEDED run with a longer schedule makes a new run that starts from the parent's
#   checkpoint at its last step, trains the added epochs only, succeeds, and shows its lineage in
#   `nmctl run --json`, `nmctl run` and `nmctl runs`; an identical second fork is reused, a fresh submission of
#   the fork's spec is not;
# - refusals name the run, key and values: resume of a SUCCEEDED or unknown run, fork with an unknown key, a
#   schedule shorter than the parent's step, another architecture (naming the resolved keys); a fork whose parent checkpoint is not on the
#   worker fails with a clear message.
# (A user resuming or forking another user's run is checked in security_e2e_test.sh, which has tokens.)
#
# Usage: resume_fork_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN RUN_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
run_yaml=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/resume_fork.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
hold="$tmp/hold"  # While it exists, a trainer that has finished two epochs waits (NMTRAIN_HOLD_FILE).

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

export NMTRAIN_HOLD_FILE="$hold" NMTRAIN_HOLD_AFTER_EPOCHS=2  # Read by every worker's trainers.
start_worker() { start_cpu_worker "$@" --kill_grace_ms=3000; }

expect_error() {  # expect_error DESCRIPTION EXIT_CODE PATTERN COMMAND...: fails with that code, stderr matches.
  local what=$1 code=$2 pattern=$3; shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [[ "$rc" != "$code" ]]; then fail "$what: exit $rc, not $code ('$err')"; return; fi
  if grep -q -- "$pattern" <<<"$err"; then log "ok: $what"; else fail "$what: got '$err'"; fi
}

# The step in the first log line of an attempt that matches a pattern ending in "step N".
logged_step() {  # logged_step RUN ATTEMPT PATTERN
  ctl logs "$1" | grep "^\[$2:0\] .*$3" | head -1 | sed -n 's/.*step \([0-9]*\).*/\1/p'
}
first_run() { ctl submit "$@" --json | json "d['runs'][0]['id']"; }

start_server 0
start_worker w1

# --- cancel mid-training, then resume: the same run, attempt 2, from the checkpoint where it stopped.
touch "$hold"  # Attempt 1 waits after two of its 24 epochs, however fast or slow the machine, until cancelled.
run=$(first_run "$run_yaml" --set schedule.epochs=24 --set name=to-resume --no-reuse)
check "run $run starts" wait_state "$run" RUNNING 60
check "run $run is held after two epochs, mid-training" wait_log "$run" "holding after 2 epochs"
ctl cancel "$run" >/dev/null
check "the cancelled run ends CANCELLED" wait_state "$run" CANCELLED 30
rm -f "$hold"  # No later run is held.
stopped=$(logged_step "$run" 1 "stopped at step")
check "its trainer stopped at a step with a checkpoint" test -n "$stopped"
check "before the end of its 240 steps" test "${stopped:-240}" -lt 240
# The issue's rough edge: resubmitting the spec makes a new run that starts fresh; submit now says so.
ctl submit "$run_yaml" --set schedule.epochs=24 --set name=to-resume --no-reuse --dry-run >"$tmp/again.out"
check "a resubmission points to nmctl resume" \
  grep -q "note: run $run had the same spec and ended CANCELLED: this new run starts fresh; nmctl resume $run would continue" "$tmp/again.out"
ctl resume "$run" >"$tmp/resume.out"
check "resume says the run is queued again" grep -q "run $run: QUEUED; attempt 2 resumes from its last checkpoint" "$tmp/resume.out"
check "the resumed run succeeds" wait_state "$run" SUCCEEDED 120
check "as attempt 2 of the same run" test "$(ctl run "$run" --json | json "d['run']['attempt']")" = 2
resumed_at=$(logged_step "$run" 2 "resuming from .*/runs/$run/checkpoint.pt")
check "attempt 2 resumed from the checkpoint at step $stopped" test "$resumed_at" = "$stopped"
check "and did not start fresh (as attempt 1 did)" bash -c \
  "'$nmctl' logs $run | grep -q '^\[1:0\] .*starting fresh' && ! '$nmctl' logs $run | grep -q '^\[2:0\] .*starting fresh'"
check "the resume is in the run's history with who asked" \
  test "$(ctl run "$run" --json | json "any(c['from']=='CANCELLED' and c['to']=='QUEUED' and c['reason'].startswith('resumed by') for c in d['history'])")" = True
check "one final point" test "$(final_points "$run")" = 1

# --- resume refusals.
expect_error "resume of a SUCCEEDED run" 1 "run $run is SUCCEEDED: only a CANCELLED or FAILED run can be resumed" \
  ctl resume "$run"
expect_error "resume of an unknown run" 3 "no run with id 999" ctl resume 999

# --- fork the SUCCEEDED run with a longer schedule: a new run from its checkpoint at step 120.
parent_step=$(ctl run "$run" --json | json "max(p['step'] for p in d['metrics'])")
check "the parent got to step 240" test "$parent_step" = 240
parent_checkpoint=$(md5sum <"$work/runs/$run/checkpoint.pt")
fork=$(ctl fork "$run" --set schedule.epochs=26 --json | json "d['run']['id']")
check "fork makes a new run" test -n "$fork" -a "$fork" != "$run"
check "the fork succeeds" wait_state "$fork" SUCCEEDED 120
forked_at=$(logged_step "$fork" 1 "forking from .*/runs/$run/checkpoint.pt")
check "the fork started from the parent's checkpoint at step $parent_step" test "$forked_at" = "$parent_step"
check "and trained only the added epochs (steps 241..260)" \
  test "$(ctl run "$fork" --json | json "min(p['step'] for p in d['metrics'] if p['kind']=='step') > $parent_step and max(p['step'] for p in d['metrics']) == 260")" = True
check "lineage in run --json" test "$(ctl run "$fork" --json | json "d['run']['lineage']['parent_run_id'] == $run and d['run']['lineage']['parent_step'] == 240 and d['run']['lineage']['overrides'] == ['schedule.epochs=26'] and d['run']['lineage']['parent_attempt'] == 2")" = True
check "lineage in run" bash -c "'$nmctl' run $fork | grep -q 'lineage: *fork of run $run (attempt 2, step 240): schedule.epochs=26'"
check "marked in runs with what it changed" bash -c "'$nmctl' runs | grep -Eq '^ *$fork .*SUCCEEDED \\(fork of $run: schedule.epochs=26\\)'"
check "the fork checkpoints in its own directory" test -s "$work/runs/$fork/checkpoint.pt"
check "and left its parent's checkpoint as it was" test "$(md5sum <"$work/runs/$run/checkpoint.pt")" = "$parent_checkpoint"
again=$(ctl fork "$run" --set schedule.epochs=26 --json | json "d['run']['reused_from']")
check "an identical fork is reused" test "$again" = "$fork"
dry_reuse() { ctl submit "$run_yaml" --set name=to-resume --dry-run --json "$@" | json "d['runs'][0]['reused_from']"; }
check "a fresh submission of the parent's spec would reuse the parent" test "$(dry_reuse --set schedule.epochs=24)" = "$run"
check "a fresh submission of the fork's spec would not reuse the fork" test "$(dry_reuse --set schedule.epochs=26)" = 0

# --- fork refusals, each naming the key and the values.
expect_error "fork with an unknown key" 2 "fork of run $run: --set schedule.epochz=3: " \
  ctl fork "$run" --set schedule.epochz=3
expect_error "fork shorter than the parent's step" 2 \
  "fork of run $run: schedule: its 2 trained epochs make 20 steps (10 per epoch), fewer than step 240" \
  ctl fork "$run" --set schedule.epochs=2
expect_error "fork with another architecture" 2 \
  "fork of run $run: model.depth: 3 differs from the parent's 2 (--set model.depth=3); a fork starts from its parent's checkpoint and keeps its architecture" \
  ctl fork "$run" --set model.depth=3
expect_error "fork of an unknown run" 3 "no run with id 999" ctl fork 999 --set schedule.epochs=3

# --- a fork whose parent's checkpoint is not on the worker fails, saying why.
mv "$work/runs/$run" "$work/runs/$run.away"
lost=$(ctl fork "$run" --set schedule.epochs=25 --json | json "d['run']['id']")
check "a fork without its parent's checkpoint fails" wait_state "$lost" FAILED 60
check "naming the missing checkpoint and the shared filesystem" bash -c \
  "'$nmctl' run $lost --json | grep -q 'no checkpoint of run $run in .*runs/$run on this worker.*shared filesystem'"
mv "$work/runs/$run.away" "$work/runs/$run"

finish
