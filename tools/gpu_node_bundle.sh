#!/usr/bin/env bash
# Packs what a GPU node lacks into one folder, on a Debian 12 build machine (docs/gpu.md): the GPU nodes have
# PyTorch with CUDA, nvcc, CMake and ninja, but no Bazel, no gRPC and no network.
#   bin/      nmserver, nmworker, nmctl (built here) and lib/ with the shared libraries they need beyond glibc
#   deps/usr/ Debian's abseil and yaml-cpp (headers and libraries) for the CMake build of nmtrain there
#   data/fashion-mnist/  the four Fashion-MNIST files the tests and the quick sweeps train on
#   env.sh    sets PATH, LD_LIBRARY_PATH, NMSPARSE_DEPS_PREFIX and NMSPARSE_FASHION_MNIST
# Usage: tools/gpu_node_bundle.sh [OUT]   (default build/gpu-node; about 70 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/gpu-node}
bash tools/bootstrap.sh
bazel build --disk_cache="${HOME}/.cache/nmsparse-bazel-disk" //:nmserver //:nmworker //:nmctl 2>&1 |
  grep -vE 'linux-sandbox|^\[[0-9,]+ / [0-9,]+\]' | tail -n 2
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/deps" "$out/data" "$out/debs"
cp bazel-bin/server/nmserver bazel-bin/worker/agent/nmworker bazel-bin/cli/nmctl "$out/bin/"

# Every shared library the programs load, except glibc's own (the node's newer glibc serves those).
for program in "$out"/bin/*; do
  ldd "$program" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done

(cd "$out/debs" && apt-get download -q libabsl-dev libabsl20220623 libyaml-cpp-dev libyaml-cpp0.7 \
  dataset-fashion-mnist >/dev/null)
for deb in "$out"/debs/*.deb; do dpkg -x "$deb" "$out/deps"; done
mv "$out/deps/usr/share/datasets/fashion-mnist" "$out/data/fashion-mnist"
rm -rf "$out/debs" "$out/deps/usr/share/doc"

cat > "$out/env.sh" <<'ENV'
# Source this on the GPU node: `source build/gpu-node/env.sh`.
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$bundle/bin:$PATH"
export LD_LIBRARY_PATH="$bundle/lib:$bundle/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NMSPARSE_DEPS_PREFIX="$bundle/deps/usr"
export NMSPARSE_FASHION_MNIST="$bundle/data/fashion-mnist"
ENV
du -sh "$out"
echo "bundle in $out: copy it (with the repository) to the GPU node, then follow docs/gpu.md"
