#!/usr/bin/env bash
# Runs every test of nmsparse: installs what is missing (idempotent), builds everything offline, runs all tests.
# Usage: tools/test.sh [extra bazel test arguments]
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/bootstrap.sh || exit 1
# The hand-written CMake build (GPU nodes) must list the sources Bazel builds nmtrain from.
bash tools/check_cmake_sources.sh
cmake_rc=$?

log=$(mktemp)
# The disk cache survives fresh clones on the same machine; the build is still complete without it.
bazel test --disk_cache="${HOME}/.cache/nmsparse-bazel-disk" //... "$@" 2>&1 | tee "$log" |
  grep -vE 'linux-sandbox|^\[[0-9,]+ / [0-9,]+\]'
rc=${PIPESTATUS[0]}

# One plain closing line with the counts, as any CI reader understands it.
passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FLAKY)' "$log")
rm -f "$log"
if [[ $cmake_rc -eq 0 ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
echo "${passed} passed, ${failed} failed"
[[ $rc -ne 0 ]] && exit "$rc"
exit "$cmake_rc"
