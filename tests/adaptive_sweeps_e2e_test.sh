#!/usr/bin/env bash
# Early stopping (ASHA) and adaptive search (TPE) end to end: the real nmserver (loopback, SQLite file), one
# nmworker with one CPU slot and real nmtrain runs.
#  - ASHA (tests/testdata/asha_sweep.yaml): with one slot the runs reach each rung in index order, so the
#    decisions are fixed by the sweep. The first run (the only one that learns) trains every epoch and
#    SUCCEEDS; the other two end STOPPED_EARLY at rung 1 with the rule's reason in `nmctl runs --json`,
#    `nmctl runs` and `nmctl run`, after one attempt (never retried), with their checkpoints kept; the
#    decisions are in the runs' logs; `follow` exits 0.
#  - TPE (tests/testdata/tpe_sweep.yaml): budget 4, parallel 1: the sweep starts with one run, the coordinator
#    proposes the others as runs end, and all four succeed with their proposed values as labels; `follow`
#    exits 0 once the budget is spent.
#  - A search space that can reach invalid runs (tests/testdata/tpe_invalid_space_sweep.yaml, issue 22) is
#    refused at submission, naming the axis, the value and the constraint, although nmctl's one draw is valid.
#
# Usage: adaptive_sweeps_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN ASHA_YAML TPE_YAML INVALID_SPACE_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
sweep_yaml=$(realpath "$5"); tpe_yaml=$(realpath "$6"); invalid_space_yaml=$(realpath "$7")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/asha_e2e.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

start_server 0
start_worker w1

sweep=$(ctl submit "$sweep_yaml" --json | json "d['sweep']['id']")
check "submit returns a sweep id" test -n "$sweep"
check "every run ends" wait_runs "$sweep" "all(r['state'] in ('SUCCEEDED','STOPPED_EARLY','FAILED','CANCELLED') for r in runs)" 300
ctl runs --sweep "$sweep" --json >"$tmp/runs.json"
field() { python3 -c "import json; runs=json.load(open('$tmp/runs.json'))['runs']; print($1)"; }
first=$(field "runs[0]['id']")
check "the run that learns (first at every rung) succeeds" test "$(field "runs[0]['state']")" = SUCCEEDED
log "runs: $(field "[(r['state'], r['message']) for r in runs]")"
check "the two runs that barely learn are stopped early" \
  test "$(field "[r['state'] for r in runs[1:]]")" = "['STOPPED_EARLY', 'STOPPED_EARLY']"
check "each at rung 1 with the rule's numbers as reason" \
  test "$(field "all(r['message'].startswith('asha: rung 1 (epoch 1): top1 ') and '< cutoff' in r['message'] for r in runs[1:])")" = True
check "after one attempt: a stopped run is not retried" test "$(field "[r['attempt'] for r in runs[1:]]")" = "[1, 1]"
stopped=$(field "runs[1]['id']")
check "a stopped run keeps its checkpoint" test -f "$work/runs/$stopped/checkpoint.pt"
check "nmctl runs shows why" bash -c "'$nmctl' runs --sweep $sweep | grep STOPPED_EARLY | grep -q 'asha: rung 1'"
check "nmctl run shows the reason" bash -c "'$nmctl' run $stopped | grep -q 'message: *asha: rung 1 (epoch 1): top1'"
check "the decision is in the stopped run's log" bash -c "'$nmctl' logs $stopped | grep -q '\[nmserver\] asha: rung 1 (epoch 1).*stopped'"
# With early_stopping.min_peers the last rung's lone survivor may end before a decision is logged for it.
check "and the promotions in the first run's log" \
  test "$(ctl logs "$first" | grep -c '\[nmserver\] asha: rung .*promoted')" -ge 1
check "follow of the sweep exits 0 (stopped early is no failure)" ctl follow "$sweep"

# --- TPE: proposals as runs end, up to the budget
tpe=$(ctl submit "$tpe_yaml" --json)
tpe_sweep=$(echo "$tpe" | json "d['sweep']['id']")
check "a search sweep starts with its parallel proposals" test "$(echo "$tpe" | json "len(d['runs'])")" = 1
check "the search's four runs succeed" wait_runs "$tpe_sweep" "len(runs) == 4 and all(r['state']=='SUCCEEDED' for r in runs)" 300
sleep 1
ctl runs --sweep "$tpe_sweep" --json >"$tmp/tpe.json"
check "no run past the budget" test "$(json "len(d['runs'])" <"$tmp/tpe.json")" = 4
check "each run carries its proposed values as labels" \
  test "$(json "all(set(r['labels']) == {'optimizer.lr', 'model.drop_path_rate'} and 1e-4 <= float(r['labels']['optimizer.lr']) <= 1e-2 for r in d['runs'])" <"$tmp/tpe.json")" = True
later=$(json "d['runs'][3]['id']" <"$tmp/tpe.json")
check "a later run was proposed by the coordinator" bash -c "'$nmctl' run $later | grep -q 'proposed by tpe'"
check "follow of the search exits 0 once its budget is spent" ctl follow "$tpe_sweep"
check "no search ended early" bash -c "! '$nmctl' sweeps | grep -q 'SEARCH ENDED EARLY'"

# --- A space that can reach invalid runs: refused at submission by the whole-space check
ctl submit "$invalid_space_yaml" >"$tmp/invalid.out" 2>"$tmp/invalid.err"
check "a space reaching invalid runs is refused at submission (exit 2)" test $? = 2
log "refused: $(cat "$tmp/invalid.err")"
check "naming the axis, the value and the constraint" \
  grep -q "at schedule.warmup_epochs=15: .*schedule.warmup_epochs: value 15 is out of range: must be <= schedule.epochs (10)" "$tmp/invalid.err"
check "and storing nothing" test "$(ctl sweeps --json | json "len(d['sweeps'])")" = 2
finish
