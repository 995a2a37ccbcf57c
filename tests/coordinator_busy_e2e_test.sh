#!/usr/bin/env bash
# End to end: when the coordinator answers UNAVAILABLE itself (here: its database locked by another process
# past SQLite's busy timeout), nmctl says that the coordinator answered and that nothing was changed, not
# "cannot reach the coordinator ... is nmserver running?", which sent people looking for a server that ran.
# The lock is held by a helper process until a file is removed, so the submission meets it whatever the timing.
#
# Usage: coordinator_busy_e2e_test.sh NMSERVER NMWORKER NMCTL SWEEP_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3")
sweep_yaml=$(realpath "$4")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/busy.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
lock_hold="$tmp/lock_hold"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

start_server 0
check "a first sweep is stored" ctl submit "$sweep_yaml"

# Another process takes the database's write lock and keeps it while $lock_hold exists.
touch "$lock_hold"
python3 - "$db" "$lock_hold" "$tmp/locked" <<'PY' &
import os, sqlite3, sys, time
db, hold, locked = sys.argv[1:]
c = sqlite3.connect(db, isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open(locked, "w").close()
while os.path.exists(hold):
    time.sleep(0.1)
c.execute("ROLLBACK")
PY
locker=$!
for _ in $(seq 300); do [[ -e "$tmp/locked" ]] && break; sleep 0.1; done
check "the helper holds the database's write lock" test -e "$tmp/locked"

ctl submit "$sweep_yaml" >"$tmp/busy.out" 2>"$tmp/busy.err"
code=$?
log "nmctl submit while locked: exit $code: $(cat "$tmp/busy.err")"
check "the submission fails with the server-error exit code (1)" test "$code" = 1
check "nmctl says the coordinator answered and nothing was changed" \
  grep -q "the coordinator at $address could not do it now: .*nothing was changed, try again" "$tmp/busy.err"
check "nmctl does not claim it could not reach the coordinator" bash -c "! grep -q 'cannot reach' '$tmp/busy.err'"
check "the answer does not name the server's database file" bash -c "! grep -qF '$db' '$tmp/busy.err'"
check "nmserver's log names it" bash -c "grep -qF 'writes to the database $db fail' '$tmp'/nmserver-*.log"

rm -f "$lock_hold"
wait "$locker"
check "once the lock is gone the same submission is stored" ctl submit "$sweep_yaml"
check "two sweeps stored, the failed submission left none" \
  test "$(ctl sweeps --json | json "len(d['sweeps'])")" = 2

stop_pid "$server_pid"
finish
