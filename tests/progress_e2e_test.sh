#!/usr/bin/env bash
# End to end (issue 27): without step lines (log_every_steps 0 and log_points 0, issue 40's default logging
# off), `nmctl watch` and `follow` show step progress before the first epoch ends. The real nmserver, nmworker and nmtrain on loopback; the trainer is held after
# its first optimizer step (NMTRAIN_HOLD_FILE with NMTRAIN_HOLD_AFTER_STEPS), so the progress seen can only
# have come from inside the epoch, however fast or slow the machine is. Also: watch shows the run's labels,
# never the trainer's (device, devices, nm_stage, ...).
#
# Usage: progress_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN SWEEP_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "${NMSPARSE_E2E_TRAINER:-$4}")
sweep_yaml=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/progress.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
hold="$tmp/hold"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

export NMTRAIN_HOLD_FILE="$hold" NMTRAIN_HOLD_AFTER_STEPS=1
start_server 0
start_worker w1

touch "$hold"  # The trainer waits after step 1 of 10 (500 images / 50 per batch) until it is removed.
sweep=$(ctl submit "$sweep_yaml" --set schedule.epochs=1 --set schedule.log_every_steps=0 \
  --set schedule.log_points=0 --json |
  json "d['sweep']['id']")
check "submit returns a sweep id" test -n "$sweep"
run=$(ctl runs --sweep "$sweep" --json | json "d['runs'][0]['id']")
check "the run is held after its first step" wait_log "$run" "holding after 1 steps"

ctl watch "$run" >"$tmp/watch.out" 2>&1 &
watch_pid=$!
ctl follow "$sweep" >"$tmp/follow.out" 2>&1 &
follow_pid=$!
wait_text() {  # wait_text FILE REGEX: until FILE has a line matching REGEX (60 s at most).
  for _ in $(seq 300); do grep -Eq -- "$2" "$1" && return 0; sleep 0.2; done
  cat "$1" >&2
  return 1
}
check "watch shows step 1 of 10 before the epoch ends" wait_text "$tmp/watch.out" "step 1/10 \(10%\)"
check "follow shows step 1 of 10 before the epoch ends" wait_text "$tmp/follow.out" "step 1/10 \(10%\)"
check "no epoch has ended yet" bash -c "! grep -q 'epoch 1/1' '$tmp/watch.out'"

rm -f "$hold"
check "watch ends with 0 when the run succeeds" wait "$watch_pid"
check "follow ends with 0 when the sweep succeeds" wait "$follow_pid"
check "watch heads with the run's labels" grep -q "recipe=dense" "$tmp/watch.out"
check "watch prints no trainer labels" bash -c "! grep -Eq '(^| )(device|devices|nm_stage|phase|precision)=' '$tmp/watch.out'"
check "nmctl run lists no progress points in its curve" bash -c "! '$nmctl' run '$run' | grep -qw progress"

finish
