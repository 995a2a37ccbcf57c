#!/usr/bin/env bash
# Runs every test of nmsparse: installs what is missing (idempotent), builds everything, runs all tests, in
# stages whose times it prints:
#   1. set-up: Debian packages (tools/bootstrap.sh, with Slurm and munge for tests/slurm_e2e_test.sh)
#   2. checks: the CMake source list and //:all_tests against Bazel's view, and the dependency direction
#   3. Bazel: every target built and //:all_tests run, against Debian's LibTorch 1.13 (CPU, Gloo)
#   4. fuzzing: every //fuzz target built with clang, ASan and UBSan and run on 3,000 inputs from a fixed seed
#      and its committed corpus (tools/fuzz.sh, NMSPARSE_FUZZ_RUNS; one count per target)
#   5. LibTorch 2.x: the trainer built with CMake against pip's torch==2.11.0 with CUDA (compiled and linked,
#      no GPU needed) and its tests run on the CPU (tools/test_libtorch2.sh; the venv is cached per machine),
#      and timm installed there regenerates the golden files of the timm tests (tools/check_timm_goldens.sh)
# Ends with one "N passed, M failed" line. Usage: tools/test.sh [extra bazel test arguments]
# NMSPARSE_SKIP_LIBTORCH2=1 leaves out stage 5 (for a quick local run; CI always runs it).
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
stage_times=()
stage_start=$SECONDS
end_stage() {  # end_stage NAME: records how long the stage took.
  stage_times+=("$(printf '%-34s %4d s' "$1" $((SECONDS - stage_start)))")
  stage_start=$SECONDS
}
count() {  # count RC: one passed or failed check.
  if [[ $1 -eq 0 ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

# NMSPARSE_SLURM=1: also Debian's Slurm and munge, for the real-Slurm end-to-end test.
NMSPARSE_SLURM=1 bash tools/bootstrap.sh || exit 1
end_stage "1. set-up (Debian packages)"

# The hand-written CMake build (GPU nodes) must list the sources Bazel builds nmtrain from, and the root test
# suite must reach every test.
bash tools/check_cmake_sources.sh
count $?
bash tools/check_test_suite.sh
count $?
bash tools/check_dependency_direction.sh
count $?
end_stage "2. source-list checks"

log=$(mktemp)
# //... also builds what no test depends on (benchmarks); //:all_tests is every test. The disk cache survives
# fresh clones on the same machine; the build is still complete without it.
bazel test --disk_cache="${HOME}/.cache/nmsparse-bazel-disk" //:all_tests //... "$@" 2>&1 |
  tee "$log" | grep -vE 'linux-sandbox|^\[[0-9,]+ / [0-9,]+\]'
bazel_rc=${PIPESTATUS[0]}
bazel_cache=$(grep -oE '[0-9]+ processes: .*' "$log" | tail -1)
passed=$((passed + $(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")))
failed=$((failed + $(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FLAKY)' "$log")))
[[ $bazel_rc -ne 0 ]] && ! grep -qE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FLAKY)' "$log" && count 1
end_stage "3. Bazel, LibTorch 1.13 (CPU)"

NMSPARSE_FUZZ_RUNS=${NMSPARSE_FUZZ_RUNS:-3000} tools/fuzz.sh 2>&1 | tee "$log"
fuzz_rc=${PIPESTATUS[0]}
passed=$((passed + $(grep -c '^fuzz: PASSED' "$log")))
failed=$((failed + $(grep -c '^fuzz: FAILED' "$log")))
[[ $fuzz_rc -ne 0 ]] && ! grep -q '^fuzz: FAILED' "$log" && count 1
end_stage "4. fuzzing (clang, ASan, UBSan)"

libtorch2_rc=0
if [[ "${NMSPARSE_SKIP_LIBTORCH2:-0}" != 1 ]]; then
  bash tools/test_libtorch2.sh 2>&1 | tee "$log"
  libtorch2_rc=${PIPESTATUS[0]}
  ccache_hits=$(grep -m1 -E '^ *Hits:' "$log" | tr -s ' ')
  ctest_passed=$(grep -cE 'Test +#[0-9]+: .* Passed' "$log")
  ctest_failed=$(grep -cE 'Test +#[0-9]+: .*(\*\*\*|Not Run)' "$log")
  passed=$((passed + ctest_passed))
  failed=$((failed + ctest_failed))
  # A configure or build failure runs no test: it still counts as one failure.
  [[ $libtorch2_rc -ne 0 && $ctest_failed -eq 0 ]] && count 1
  # timm from PyPI into the same venv: the golden files of models_test, loss_test and lr_scheduler_test.
  bash tools/check_timm_goldens.sh
  count $?
  end_stage "5. CMake, LibTorch 2.11 + CUDA"
fi
rm -f "$log"

echo "stage times:"
printf '  %s\n' "${stage_times[@]}"
# CI keeps no output of a green run: each run leaves its times and cache hits on the machine, where the next
# session can see why a run was slow (a cold cache is the usual reason).
times_log="${HOME}/.cache/nmsparse/test-times.log"
mkdir -p "$(dirname "$times_log")" &&
  {
    echo "$(date -u +%FT%TZ) $PWD CI=${CI:-} commit=$(git rev-parse --short HEAD 2>/dev/null) total=${SECONDS}s"
    printf '  %s\n' "${stage_times[@]}" "bazel: ${bazel_cache:-}" "ccache: ${ccache_hits:-}"
  } >> "$times_log"
# One plain closing line with the counts, as any CI reader understands it.
echo "${passed} passed, ${failed} failed"
[[ $failed -eq 0 && $bazel_rc -eq 0 && $fuzz_rc -eq 0 && $libtorch2_rc -eq 0 ]]
