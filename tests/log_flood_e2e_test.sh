#!/usr/bin/env bash
# A trainer's log flood (issue 36: 150,000 lines gave 100,000 stored, a notice saying 34,320 dropped where
# 50,000 were, about 15.7k lines missing from the middle and a silent worker log), scaled down, through the
# real nmserver (--max_log_lines_per_run=1000), nmworker (--outbox_capacity=1000) and nmctl on loopback, with a
# stand-in trainer (tests/testdata/flood_trainer.sh). For each run the stored log must be the flood's first
# lines, one notice "[nmserver] N log line(s) dropped here, ...", and its latest lines, in one piece each,
# with N exactly the lines in between.
# 1. The worker drops: 5,000 lines printed while nmserver is stopped (SIGSTOP; the lease is long), so the
#    outbox must drop about 4,000 of them. The worker's log says it started dropping and how many it dropped
#    in all, the same count as the run's notice.
# 2. The coordinator drops: 3,000 lines against its cap of 1,000 (whatever the worker dropped on the way).
#
# Usage: log_flood_e2e_test.sh NMSERVER NMWORKER NMCTL FLOOD_TRAINER RUN_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
run_yaml=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/log_flood.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
mkdir -p "$work"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

wait_file() {  # wait_file PATH (2 minutes at most)
  for _ in $(seq 1200); do [[ -e "$1" ]] && return 0; sleep 0.1; done
  return 1
}
wait_text() {  # wait_text FILE TEXT (2 minutes at most)
  for _ in $(seq 1200); do grep -qF -- "$2" "$1" && return 0; sleep 0.1; done
  return 1
}
run_state() { ctl run "$1" --json | json "d['run']['state']"; }
wait_state() {
  for _ in $(seq 600); do [[ "$(run_state "$1")" == "$2" ]] && return 0; sleep 0.2; done
  return 1
}
# Checks the run's stored log against a flood of LINES lines; prints the notice's count.
check_flood() {  # check_flood RUN LINES
  ctl logs "$1" | python3 -c "
import re, sys
lines, total = [l.rstrip('\n') for l in sys.stdin], int(sys.argv[1])
body = [re.sub(r'^\[[0-9]+:[0-9]+\] ', '', l) for l in lines]
notices = [i for i, t in enumerate(body) if t.startswith('[nmserver] ') and ' log line(s) dropped here' in t]
if len(notices) != 1: sys.exit('expected one notice, got %d' % len(notices))
n = int(re.match(r'\[nmserver\] ([0-9,]+) ', body[notices[0]]).group(1).replace(',', ''))
def numbers(part):
  out = []
  for t in part:
    m = re.fullmatch(r'flood line ([0-9]+)', t)
    if not m: sys.exit('unexpected line: %r' % t)
    out.append(int(m.group(1)))
  return out
head, tail = numbers(body[:notices[0]]), numbers(body[notices[0] + 1:])
if not head or head != list(range(1, len(head) + 1)): sys.exit('the head is not lines 1..H: %s...' % head[:5])
if not tail or tail != list(range(total - len(tail) + 1, total + 1)): sys.exit('the tail is not the latest lines')
if len(head) + n + len(tail) != total:
  sys.exit('head %d + dropped %d + tail %d != %d' % (len(head), n, len(tail), total))
print(n)
sys.stderr.write('head %d, dropped %d, tail %d of %d\n' % (len(head), n, len(tail), total))
" "$2"
}

start_server 0 --lease_ms=120000 --grace_ms=60000 --max_log_lines_per_run=1000
start_worker w1 --outbox_capacity=1000
wlog="$tmp/nmworker-w1.log"

# 1. The worker's outbox overflows while the coordinator is stopped.
echo 5000 >"$work/flood_lines"
run=$(ctl submit "$run_yaml" --set name=flood-1 --no-reuse --json | json "d['runs'][0]['id']")
check "run $run's trainer is ready" wait_file "$work/runs/$run/ready"
kill -STOP "$server_pid"
touch "$work/go"
check "its trainer printed 5,000 lines and ended, read whole by the worker" \
  wait_text "$wlog" "run $run attempt 1 ended"
kill -CONT "$server_pid"
check "run $run succeeds" wait_state "$run" SUCCEEDED
dropped=$(check_flood "$run" 5000)
check "its log is the flood's head, one true notice and its tail" test -n "$dropped"
check "the worker dropped lines (its outbox holds 1,000 reports)" test "${dropped:-0}" -ge 4000
check "the worker's log says when it started dropping" \
  grep -qF "dropping log lines of run $run attempt 1 between its first and its latest" "$wlog"
check "and how many, the run's count" grep -qF "run $run attempt 1: ${dropped:-x} log line(s) dropped in all" "$wlog"

# 2. The coordinator's cap.
rm -f "$work/go"
echo 3000 >"$work/flood_lines"
run2=$(ctl submit "$run_yaml" --set name=flood-2 --no-reuse --json | json "d['runs'][0]['id']")
check "run $run2's trainer is ready" wait_file "$work/runs/$run2/ready"
touch "$work/go"
check "run $run2 succeeds" wait_state "$run2" SUCCEEDED
dropped2=$(check_flood "$run2" 3000)
check "its log is the flood's head, one true notice and its tail" test -n "$dropped2"
check "at least the 2,000 lines past the cap are counted" test "${dropped2:-0}" -ge 2000

finish
