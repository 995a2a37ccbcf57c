#!/usr/bin/env bash
# Packs what a GPU node lacks into one folder, on a Debian 12 build machine (docs/gpu.md): the GPU nodes have
# PyTorch with CUDA, nvcc, CMake and ninja, but no Bazel, no gRPC and no network.
#   bin/      nmserver, nmworker, nmctl (built here) and lib/ with the shared libraries they need beyond glibc
#             and the C++ runtime (lib/cxx/: Debian 12's libstdc++ and libgcc_s, used only where the node's own
#             are older)
#   deps/usr/ Debian's abseil, yaml-cpp and googletest (headers and libraries) for the CMake build of
#             nmtrain and its tests there
#   data/fashion-mnist/  the four Fashion-MNIST files the tests and the quick sweeps train on
#   env.sh    sets PATH, LD_LIBRARY_PATH, NMSPARSE_DEPS_PREFIX and NMSPARSE_FASHION_MNIST. nmworker hands its
#             environment to the ranks, so LD_LIBRARY_PATH must not put a C++ runtime older than the node's
#             before it: Debian 12's libstdc++ stops at GLIBCXX_3.4.30 and an nmtrain built by g++ 13 or later
#             needs 3.4.32 (from <iostream>).
# Usage: tools/gpu_node_bundle.sh [OUT]   (default build/gpu-node; about 70 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/gpu-node}
bash tools/bootstrap.sh
bazel build --disk_cache="${HOME}/.cache/nmsparse-bazel-disk" //:nmserver //:nmworker //:nmctl 2>&1 |
  grep -vE 'linux-sandbox|^\[[0-9,]+ / [0-9,]+\]' | tail -n 2
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/cxx" "$out/deps" "$out/data" "$out/debs"
cp bazel-bin/server/nmserver bazel-bin/worker/agent/nmworker bazel-bin/cli/nmctl "$out/bin/"

# Every shared library the programs load, except glibc's own (the node's newer glibc serves those); the C++
# runtime apart, in lib/cxx/, for env.sh to add only where the node's is older than Debian 12's.
for program in "$out"/bin/*; do
  ldd "$program" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*) ;;
    libstdc++.so*|libgcc_s.so*) cp -L "$lib" "$out/lib/cxx/" ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done

# googletest (static libraries and CMake config; gmock too, which GTest's CMake targets name): without it the
# node's test binaries would not build (tools/test_libtorch2.sh now refuses that).
(cd "$out/debs" && apt-get download -q libabsl-dev libabsl20220623 libyaml-cpp-dev libyaml-cpp0.7 \
  libgtest-dev libgmock-dev libturbojpeg0-dev libturbojpeg0 libarchive-dev libarchive13 nlohmann-json3-dev dataset-fashion-mnist >/dev/null)
for deb in "$out"/debs/*.deb; do dpkg -x "$deb" "$out/deps"; done
mv "$out/deps/usr/share/datasets/fashion-mnist" "$out/data/fashion-mnist"
rm -rf "$out/debs" "$out/deps/usr/share/doc"

cat > "$out/env.sh" <<'ENV'
# Source this on the GPU node: `source build/gpu-node/env.sh`.
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$bundle/bin:$PATH"
# The node's C++ runtime serves the bundled programs as it serves a node-built nmtrain (which nmworker starts
# with this environment), unless it is older than the Debian 12 one they were built with: only then is the
# bundled one added, last, and a node-built nmtrain then needs a compiler no newer than g++ 12.
cxx=$(/sbin/ldconfig -p 2>/dev/null | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')
bundle_libs="$bundle/lib:$bundle/deps/usr/lib/x86_64-linux-gnu"
if [[ -z "$cxx" ]] || ! grep -q GLIBCXX_3.4.30 "$cxx"; then
  echo "env.sh: the node's libstdc++ is older than Debian 12's: using the bundled one" >&2
  bundle_libs="$bundle_libs:$bundle/lib/cxx"
fi
export LD_LIBRARY_PATH="$bundle_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset cxx bundle_libs
export NMSPARSE_DEPS_PREFIX="$bundle/deps/usr"
export NMSPARSE_FASHION_MNIST="$bundle/data/fashion-mnist"
ENV
du -sh "$out"
echo "bundle in $out: copy it (with the repository) to the GPU node, then follow docs/gpu.md"
