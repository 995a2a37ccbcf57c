#!/usr/bin/env bash
# A full and a read-only work directory (issue 36), through the real nmserver, nmworker and nmtrain on
# loopback, with the work directory on a tmpfs of its own (as chaos case 5 does for the database). One run
# (max_retries 0) is held after two epochs (NMTRAIN_HOLD_FILE), then:
# 1. the disk is filled and the run released: its epoch-3 checkpoint write fails. The attempt ends with
#    nmtrain's storage exit (6) and one line naming the temporary file and the OS error; no temporary file
#    is left, nothing aborted, and the epoch-2 checkpoint is intact.
# 2. still full, the run is resumed: nmworker cannot write its spec. The attempt fails as a retryable failure
#    naming the file and the error ("no retries left", never "bad spec: not retried"), and no short spec or
#    temporary file is left.
# 3. space freed, the run is resumed again: it resumes from the epoch-2 checkpoint and SUCCEEDS.
# 4. a second run held after two epochs, the work directory remounted read-only: the attempt's message names
#    the file and "read-only file system" in one line, with no C++ backtrace.
# Mounting needs root (as `bazel test` runs here and in CI); without it the test says so and passes.
#
# Usage: full_disk_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN SWEEP_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
sweep_yaml=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/full_disk.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
hold="$tmp/hold"
mkdir -p "$work"
if [[ $(id -u) != 0 ]] || ! mount -t tmpfs -o size=64m nmsparse-full-disk "$work" 2>/dev/null; then
  echo "full_disk_e2e_test: SKIPPED: cannot mount a tmpfs on $work (needs root); nothing was checked" >&2
  exit 0
fi

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"
trap 'cleanup; umount -l "$work" 2>/dev/null' EXIT

export NMTRAIN_HOLD_FILE="$hold" NMTRAIN_HOLD_AFTER_EPOCHS=2
run_field() { ctl run "$1" --json | json "d['run']['$2']"; }
wait_state() {  # wait_state RUN STATE
  for _ in $(seq 600); do
    [[ "$(run_field "$1" state)" == "$2" ]] && return 0
    sleep 0.2
  done
  log "run $1 is $(run_field "$1" state), not $2"
  return 1
}
fill() { dd if=/dev/zero of="$work/filler.$1" bs=64k status=none 2>/dev/null; true; }  # Until ENOSPC.
has() { grep -qF -- "$2" <<<"$1"; }
lacks() { ! grep -qF -- "$2" <<<"$1"; }

start_server 0
start_worker w1

touch "$hold"
sweep=$(ctl submit "$sweep_yaml" --no-reuse --json | json "d['sweep']['id']")
run=$(ctl runs --sweep "$sweep" --json | json "d['runs'][0]['id']")
dir="$work/runs/$run"
check "run $run is held after two epochs" wait_log "$run" "holding after 2 epochs"

# 1. The checkpoint write meets a full disk.
fill 1
rm -f "$hold"
check "the attempt fails" wait_state "$run" FAILED
message=$(run_field "$run" message)
log "message: $message"
check "with nmtrain's storage exit" has "$message" "exited with code 6 (storage error)"
check "naming the file and the OS error" has "$message" "no space left on device: $dir/checkpoint.pt.tmp"
logs=$(ctl logs "$run")
check "nothing aborted" lacks "$logs" "terminate called"
check "no temporary checkpoint is left" test ! -e "$dir/checkpoint.pt.tmp"
check "the epoch-2 checkpoint is intact (its SHA-256 is the recorded latest)" test \
  "$(sha256sum <"$dir/checkpoint.pt" | cut -d' ' -f1)" = "$(head -1 "$dir/checkpoint.sha256")"

# 2. The next attempt's spec meets a full disk (the removed temporary file had freed some space).
fill 2
spec_before=$(cat "$dir/spec.yaml")
ctl resume "$run" >/dev/null
check "the resumed attempt fails" wait_state "$run" FAILED
message=$(run_field "$run" message)
log "message: $message"
check "as nmworker's retryable failure" has "$message" "no retries left"
check "not as a bad spec" lacks "$message" "bad spec"
check "naming the spec file and the OS error" has "$message" \
  "nmworker cannot write the run's spec: no space left on device: $dir/spec.yaml.tmp"
check "no temporary spec is left" test ! -e "$dir/spec.yaml.tmp"
check "the spec is whole" test "$(cat "$dir/spec.yaml")" = "$spec_before"

# 3. Space freed: the run resumes from its epoch-2 checkpoint and succeeds.
rm -f "$work"/filler.*
ctl resume "$run" >/dev/null
check "once space is back the run succeeds" wait_state "$run" SUCCEEDED
check "resuming from the epoch-2 checkpoint" bash -c \
  "'$nmctl' logs $run | grep -q '^\[3:0\] .*resuming from $dir/checkpoint.pt at epoch 2'"

# 4. A read-only work directory under a held run.
touch "$hold"
sweep2=$(ctl submit "$sweep_yaml" --set name=full-disk-ro --no-reuse --json | json "d['sweep']['id']")
run2=$(ctl runs --sweep "$sweep2" --json | json "d['runs'][0]['id']")
check "run $run2 is held after two epochs" wait_log "$run2" "holding after 2 epochs"
mount -o remount,ro "$work"
rm -f "$hold"
check "the attempt on a read-only disk fails" wait_state "$run2" FAILED
message=$(run_field "$run2" message)
log "message: $message"
mount -o remount,rw "$work"
check "naming the file and the error" has "$message" \
  "cannot write the checkpoint: read-only file system: $work/runs/$run2/checkpoint.pt.tmp"
check "without a C++ backtrace" lacks "$message" "Exception raised from"
check "in one line after the exit" test "$(grep -c 'read-only file system' <<<"$message")" = 1

finish
