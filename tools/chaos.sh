#!/usr/bin/env bash
# Runs the chaos suite (tests/chaos_test.sh, docs/reliability.md "Chaos suite") several times in a row against
# freshly built nmserver, nmworker, nmctl and nmtrain, printing each run's time and seed and a closing
# "N passed, M failed" line. CI runs it once, as //tests:chaos_test.
# Usage: tools/chaos.sh [RUNS]   (default 3)
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
bazel build --disk_cache="${HOME}/.cache/nmsparse-bazel-disk" //:nmserver //:nmworker //:nmtrain //:nmctl 2>&1 |
  grep -vE 'linux-sandbox|^\[[0-9,]+ / [0-9,]+\]' || true
bin=bazel-bin
passed=0
failed=0
for i in $(seq "$runs"); do
  start=$SECONDS
  if bash tests/chaos_test.sh "$bin/server/nmserver" "$bin/worker/agent/nmworker" "$bin/cli/nmctl" \
    "$bin/worker/trainer/nmtrain" tests/testdata/chaos_sweep.yaml 2>&1 | tee "/tmp/nmsparse-chaos-$i.log" |
    grep -E 'e2e: (seed|case|FAIL|all checks)'; then
    passed=$((passed + 1))
    echo "chaos run $i of $runs: passed in $((SECONDS - start)) s"
  else
    failed=$((failed + 1))
    echo "chaos run $i of $runs: FAILED in $((SECONDS - start)) s (log /tmp/nmsparse-chaos-$i.log)"
  fi
done
echo "${passed} passed, ${failed} failed"
[[ $failed -eq 0 ]]
