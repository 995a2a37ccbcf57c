#!/usr/bin/env bash
# Sweeps over model size (issue 28) end to end: the real nmserver (loopback, SQLite file), one nmworker with
# one CPU slot and real nmtrain runs of the nano ViT on synthetic images.
#  - A grid over model.depth (tests/testdata/depth_grid_sweep.yaml): depths 1, 2, 3 all SUCCEED with the depth
#    as label; `nmctl compare` prints one row per depth; each run's final metric line reports the model's
#    parameter count ("params", shown by `nmctl run`), which differs per depth and grows with it; `nmctl report`
#    plots top-1 against those parameters.
#  - A random integer axis over model.depth (tests/testdata/depth_random_sweep.yaml, num_samples 2): validated,
#    submitted, and both draws SUCCEED with their drawn depths, within the axis's bounds, as labels.
#
# Usage: model_size_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN GRID_YAML RANDOM_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
grid_yaml=$(realpath "$5"); random_yaml=$(realpath "$6")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/model_size_e2e.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

start_server 0
start_worker w1

# --- A grid over depth: one compare row and one parameter count per size
sweep=$(ctl submit "$grid_yaml" --json | json "d['sweep']['id']")
check "submit returns a sweep id" test -n "$sweep"
check "the three sizes succeed" wait_runs "$sweep" "len(runs) == 3 and all(r['state']=='SUCCEEDED' for r in runs)" 300
ctl runs --sweep "$sweep" --json >"$tmp/grid.json"
check "each run carries its depth as label" \
  test "$(json "sorted(r['labels']['model.depth'] for r in d['runs'])" <"$tmp/grid.json")" = "['1', '2', '3']"

ctl compare "$sweep" >"$tmp/compare.txt"
check "nmctl compare exits 0" test $? = 0
log "compare:"; cat "$tmp/compare.txt" >&2
check "nmctl compare names the depth axis" grep -q "model.depth" "$tmp/compare.txt"
for depth in 1 2 3; do
  check "nmctl compare has one row for depth $depth" test "$(grep -cE "^ *$depth +[0-9]" "$tmp/compare.txt")" = 1
done
ctl compare "$sweep" --json >"$tmp/compare.json"
check "compare --json: one row per depth, each with its succeeded run" \
  test "$(json "[(r['label'], r['cells'][0]['n']) for r in d['rows']]" <"$tmp/compare.json")" = \
  "[('1', 1), ('2', 1), ('3', 1)]"

# Parameters by depth, from each run's final metric line (nmctl runs --json) and as nmctl run prints them.
by_depth="sorted(d['runs'], key=lambda r: int(r['labels']['model.depth']))"
params=$(json "' '.join(str(int(r['final_metrics']['params'])) for r in $by_depth)" <"$tmp/grid.json")
log "parameters at depth 1, 2, 3: $params"
read -r p1 p2 p3 <<<"$params"
check "every run reports its parameter count" test -n "${p3:-}"
check "the parameter count grows with depth" test "${p1:-0}" -gt 0 -a "${p2:-0}" -gt "${p1:-0}" -a "${p3:-0}" -gt "${p2:-0}"
check "by one block each: depth 3 - depth 2 = depth 2 - depth 1" \
  test -n "${p3:-}" -a "$((${p3:-0} - ${p2:-0}))" = "$((${p2:-0} - ${p1:-0}))"
first=$(json "[r['id'] for r in d['runs'] if r['labels']['model.depth']=='1'][0]" <"$tmp/grid.json")
check "nmctl run shows the parameter count" bash -c "'$nmctl' run $first | grep -qE 'final:.* params=$p1( |\$)'"

# The report plots accuracy against parameters: one series per recipe (here DENSE), over the three sizes.
check "nmctl report writes the report" ctl report "$sweep" -o "$tmp/report"
check "the report has accuracy vs parameters" grep -q 'src="top1_vs_params.svg"' "$tmp/report/index.html"
check "accuracy vs parameters has the recipe's series" grep -q "<title>DENSE</title>" "$tmp/report/top1_vs_params.svg"
check "accuracy vs parameters has its axis titles" \
  bash -c "grep -q '>parameters<' '$tmp/report/top1_vs_params.svg' && grep -q '>final top1<' '$tmp/report/top1_vs_params.svg'"

# --- A random integer axis over depth
check "nmctl validate accepts the random depth axis" bash -c "'$nmctl' validate '$random_yaml' >'$tmp/validate.out'"
random=$(ctl submit "$random_yaml" --json)
random_sweep=$(echo "$random" | json "d['sweep']['id']")
check "submit draws two runs" test "$(echo "$random" | json "len(d['runs'])")" = 2
check "both draws succeed" wait_runs "$random_sweep" "len(runs) == 2 and all(r['state']=='SUCCEEDED' for r in runs)" 300
ctl runs --sweep "$random_sweep" --json >"$tmp/random.json"
log "drawn depths: $(json "[r['labels'] for r in d['runs']]" <"$tmp/random.json")"
check "each draw is an integer depth in [1, 4] as label" \
  test "$(json "all(r['labels']['model.depth'] in ('1', '2', '3', '4') for r in d['runs'])" <"$tmp/random.json")" = True
check "each draw trains its drawn depth (parameters as the grid's run of that depth)" \
  test "$(python3 -c "
import json
grid = {r['labels']['model.depth']: r['final_metrics']['params'] for r in json.load(open('$tmp/grid.json'))['runs']}
runs = json.load(open('$tmp/random.json'))['runs']
print(all(grid.get(r['labels']['model.depth'], r['final_metrics']['params']) == r['final_metrics']['params'] for r in runs))")" = True
finish
