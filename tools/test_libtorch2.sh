#!/usr/bin/env bash
# The trainer against pip's LibTorch 2.x with CUDA, as on the GPU nodes (docs/gpu.md): configures
# worker/trainer/CMakeLists.txt with CUDA enabled (nvcc from /usr/local/cuda; no GPU needed to compile and
# link), builds nmtrain, nmshard and the trainer's test binaries, and runs the tests on the CPU with that
# LibTorch. Multi-rank CPU tests skip here (pip's wheels ship no Gloo headers): the Bazel build covers them
# against Debian's LibTorch 1.13.
# Usage: tools/test_libtorch2.sh [BUILD_DIR]   (default build/libtorch2-cuda; kept between runs)
# On a GPU node (docs/gpu.md): NMSPARSE_TORCH_PYTHON names the Python whose torch to build against, and
# NMSPARSE_DEPS_PREFIX an unpacked usr/ with abseil and yaml-cpp when the node has none.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/libtorch2-cuda}
torch_dir=$(bash tools/libtorch2_env.sh)
# Only the GPU nodes' architecture (Hopper) for any CUDA source: every architecture would multiply compile time.
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
# The torch package directory first: on a machine with Debian's LibTorch too, CMake must not pick that one.
mkdir -p "$build"
# A fresh clone builds every source again; ccache (in ~/.cache, like Bazel's disk cache and the venv) keeps the
# objects of unchanged sources between clones. The precompiled LibTorch header is cached too: ccache needs the
# sloppiness below for it, and then still hashes the header's contents.
launcher=()
if command -v ccache > /dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/nmsparse-ccache}
  # Paths below the clone are hashed relative to it, so that a clone elsewhere hits the same entries.
  export CCACHE_BASEDIR=$PWD
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  # The statistics printed after the build are then this build's alone.
  ccache --zero-stats > /dev/null
fi
cmake -S worker/trainer -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_dir" \
  "${launcher[@]}" \
  -DNMSPARSE_REQUIRE_CUDA=ON -DNMSPARSE_REQUIRE_TESTS=ON -DNMSPARSE_DEPS_PREFIX="${NMSPARSE_DEPS_PREFIX:-}" \
  > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
grep -E "nmsparse:|Found Torch" "$build/configure.log" >&2
cmake --build "$build" -j "$(nproc)"
[[ ${#launcher[@]} -gt 0 ]] && ccache --show-stats 2>/dev/null | grep -iE "hits|misses" | head -3 >&2 || true
# The tests run from the build directory; nmtrain_test finds nmtrain beside it. The LibTorch libraries come
# through the binaries' RUNPATH.
# A ctest that finds no test passes; here that would hide a build that made none.
tests=$(cd "$build" && ctest -N | awk '/Total Tests:/ {print $3}')
if [[ "${tests:-0}" -eq 0 ]]; then
  echo "test_libtorch2: ctest found no test in $build: the test binaries were not built" >&2
  exit 1
fi
(cd "$build" && OMP_NUM_THREADS=1 ctest --output-on-failure --timeout 900)
