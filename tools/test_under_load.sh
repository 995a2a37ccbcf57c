#!/usr/bin/env bash
# Runs the whole test command (tools/test.sh) ROUNDS times with two CPU-bound processes beside it
# (`stress-ng --cpu 2`, one busy worker per core of these 2-core machines), as issue 22 asks: the tests must not
# depend on an idle machine. Prints each round's closing line and time, then one "N passed, M failed" line
# counting rounds. Installs stress-ng first (NMSPARSE_LOAD=1 tools/bootstrap.sh).
# Every round reruns every test: Bazel's cached results are not reused (--nocache_test_results).
# Usage: tools/test_under_load.sh [ROUNDS]   (default 2; extra arguments after it go to tools/test.sh)
set -uo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-2}
shift || true
NMSPARSE_LOAD=1 bash tools/bootstrap.sh || exit 1

stress-ng --cpu 2 --cpu-method matrixprod --timeout 0 --quiet &
stress_pid=$!
trap 'kill "$stress_pid" 2>/dev/null; wait "$stress_pid" 2>/dev/null' EXIT

passed=0
failed=0
for i in $(seq "$rounds"); do
  start=$SECONDS
  log="/tmp/nmsparse-test-under-load-$i.log"
  if bash tools/test.sh --nocache_test_results "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    result=passed
  else
    failed=$((failed + 1))
    result=FAILED
  fi
  echo "round $i of $rounds under load: $result in $((SECONDS - start)) s ($(tail -n 1 "$log"); log $log)"
  grep -E '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|FLAKY)' "$log" || true
done
echo "${passed} passed, ${failed} failed"
[[ $failed -eq 0 ]]
