#!/usr/bin/env bash
# The CMake build of nmtrain (worker/trainer/CMakeLists.txt, for GPU nodes without Bazel) lists its sources by
# hand. This check fails when they drift from what Bazel builds nmtrain and nmshard from: run by tools/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel_srcs=$(bazel query --noshow_progress \
  'kind("source file", deps(//worker/trainer:nmtrain) union deps(//worker/trainer/data:nmshard))' 2>/dev/null |
  grep '^//.*\.cc$' | sed -E 's|^//||; s|:|/|' | sort)
# Test binaries, their helpers (*_testing.cc) and benchmarks (bench/) are not part of nmtrain or nmshard.
cmake_srcs=$(grep -o '${NMSPARSE_ROOT}/[^ )]*\.cc' worker/trainer/CMakeLists.txt | sed 's|${NMSPARSE_ROOT}/||' |
  grep -v -e '\${test}' -e '_testing\.cc$' -e '^bench/' | sort -u)
if ! diff <(echo "$bazel_srcs") <(echo "$cmake_srcs") > /dev/null; then
  echo "worker/trainer/CMakeLists.txt and Bazel disagree on nmtrain's sources ('<' only in Bazel, '>' only in CMake):" >&2
  diff <(echo "$bazel_srcs") <(echo "$cmake_srcs") | grep '^[<>]' >&2
  exit 1
fi
echo "CMake source list matches Bazel ($(echo "$bazel_srcs" | wc -l) files)"
