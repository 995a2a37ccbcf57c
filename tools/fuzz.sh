#!/usr/bin/env bash
# Fuzzes the parsers and validators that take outside input (fuzz/, docs/reliability.md "Fuzzing"): builds
# every //fuzz target with Debian's clang as a libFuzzer binary with ASan and UBSan (bazel --config=fuzz, in an
# output base of its own so the ordinary gcc build is untouched), then runs each for a bounded time from its
# committed seed corpus. New inputs go to a scratch corpus; a crash, sanitizer report, timeout or broken
# property leaves its input under the artifact directory.
# Prints "fuzz: PASSED T (...)" or "fuzz: FAILED T (...)" per target and exits 1 when any failed.
# Usage: tools/fuzz.sh [SECONDS_PER_TARGET]   (default 10: about 60 s for the six targets)
# NMSPARSE_FUZZ_RUNS=N: instead of a time, N inputs per target from a fixed seed, so that a run explores the
# same inputs on any machine, loaded or not (tools/test.sh, CI): a new crash is then found by a change, never
# by chance. Longer exploration is the time-bounded form, run by hand.
# NMSPARSE_FUZZ_ARTIFACTS: where crash inputs are kept (default: a fresh directory under /tmp).
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-10}
runs=${NMSPARSE_FUZZ_RUNS:-}
if [[ -n "$runs" ]]; then
  budget=(-runs="$runs" -seed=1)
  budget_text="$runs inputs from seed 1"
else
  budget=(-max_total_time="$seconds")
  budget_text="${seconds} s"
fi
artifacts=${NMSPARSE_FUZZ_ARTIFACTS:-$(mktemp -d /tmp/nmsparse-fuzz.XXXXXX)}
mkdir -p "$artifacts"
# An output base per checkout, never shared with the gcc build (named without asking Bazel, whose ordinary
# server may be busy).
base="${HOME}/.cache/nmsparse-sanitize/$(echo -n "$PWD" | md5sum | cut -c1-32)"
fuzz_bazel() { bazel --output_base="$base" "$@"; }

targets=$(fuzz_bazel query --noshow_progress 'kind(cc_test, //fuzz:all)' 2>/dev/null | sed 's|^//fuzz:||')
[[ -n "$targets" ]] || { echo "fuzz: FAILED build (no targets found in //fuzz)"; exit 1; }
# --symlink_prefix=/ leaves bazel-bin pointing at the ordinary build. gold's notes on ASan's local symbols in
# shared objects are noise.
fuzz_bazel build --config=fuzz --symlink_prefix=/ --disk_cache="${HOME}/.cache/nmsparse-bazel-disk" //fuzz:all 2>&1 |
  grep -vE 'linux-sandbox|^\[[0-9,]+ / [0-9,]+\]|Cannot export local symbol'
[[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "fuzz: FAILED build (bazel --config=fuzz //fuzz:all)"; exit 1; }
bin=$(fuzz_bazel info --config=fuzz bazel-bin 2>/dev/null)/fuzz

failed=0
for t in $targets; do
  scratch="$artifacts/$t-corpus"
  mkdir -p "$scratch"
  log="$artifacts/$t.log"
  # -timeout: an input slower than 10 s is a hang; -rss_limit_mb: one input may not take 2 GB.
  "$bin/$t" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t-" "$scratch" "fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(find "$artifacts" -maxdepth 1 -name "$t-*" -type f | wc -l)
  summary="${execs:-0} executions ($budget_text), ${crashes} crash input(s), corpus $(ls "$scratch" | wc -l) new"
  if [[ $rc -eq 0 && $crashes -eq 0 ]]; then
    echo "fuzz: PASSED $t ($summary)"
  else
    echo "fuzz: FAILED $t (exit $rc, $summary; log $log)"
    grep -m 20 -E 'ERROR|runtime error|FUZZ_CHECK|SUMMARY|==[0-9]+==' "$log"
    failed=$((failed + 1))
  fi
done
echo "fuzz: artifacts in $artifacts"
[[ $failed -eq 0 ]]
