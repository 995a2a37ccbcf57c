#!/usr/bin/env bash
# //:all_tests (the root BUILD.bazel) names each package's test suite by hand. This check fails when a test
# exists that the suite does not reach: run by tools/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
all=$(bazel query --noshow_progress 'tests(//...)' 2>/dev/null | sort)
suite=$(bazel query --noshow_progress 'tests(//:all_tests)' 2>/dev/null | sort)
missing=$(comm -23 <(echo "$all") <(echo "$suite"))
if [[ -n "$missing" ]]; then
  echo "tests that //:all_tests does not reach (add their package's all_tests to the root BUILD.bazel):" >&2
  echo "$missing" >&2
  exit 1
fi
echo "//:all_tests reaches all $(echo "$all" | wc -l) tests"
