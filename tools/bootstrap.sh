#!/usr/bin/env bash
# Installs every Debian package nmsparse builds, tests and runs with. Idempotent: when all are present it
# does nothing (no apt-get update, no network). Everything else the build needs is in the repository.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap            # Bazel 4.2.3, offline with the stubs in third_party/
  g++ clang-format
  ccache                     # compiler cache for the CMake build of tools/test_libtorch2.sh (kept in ~/.cache)
  clang libclang-rt-14-dev   # libFuzzer, ASan and UBSan for tools/fuzz.sh (Debian's clang 14)
  libtorch-dev libgloo-dev   # LibTorch 1.13 (CPU) with c10d/Gloo
  libopenblas0-openmp        # fast BLAS for LibTorch (the default reference BLAS is ~10x slower)
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libsqlite3-dev libyaml-cpp-dev libssl-dev zlib1g-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  libturbojpeg0-dev          # TurboJPEG: JPEG decoding (scaled in the DCT domain) for ImageFolder and packed JPEG
  libarchive-dev             # nmshard reads WebDataset tar shards
  openssl                    # the TLS tests make their own CA and certificates
  dataset-fashion-mnist      # the embedded default dataset (/usr/share/datasets/fashion-mnist)
  gnuplot-nox                # nmctl report and the dashboard draw their SVG figures with it
  libmstch-dev               # mustache templates (C++) for the report and dashboard pages
  libcpp-httplib-dev         # the dashboard's HTTP server in nmserver
  python3-plotly             # its plotly.js draws the figures in the browser (dashboard and HTML report)
  librsvg2-bin               # rsvg-convert: nmctl report --pdf turns the SVG figures into PDF
  chromium-headless-shell    # tests/dashboard_e2e_test.sh loads the dashboard in a real headless Chromium
)
if [[ "${NMSPARSE_SLURM:-0}" == 1 ]]; then
  # A two-node Slurm on one host for tests/slurm_e2e_test.sh (tools/test.sh asks for it; the main job does
  # not need it).
  # The test starts its own daemons with its own config; none is configured system-wide here.
  PACKAGES+=(slurmctld slurmd slurm-client munge)
fi
if [[ "${NMSPARSE_LOAD:-0}" == 1 ]]; then
  PACKAGES+=(stress-ng)  # tools/test_under_load.sh: the test command beside two CPU-bound processes
fi
if [[ "${NMSPARSE_BENCH:-0}" == 1 ]]; then
  PACKAGES+=(python3-torch)  # PyTorch from Python over the same LibTorch, the trainer benchmark's baseline
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) == 0 ]] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# OpenBLAS must be the libblas.so.3 that LibTorch loads.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 || true)
if [[ "$blas" != *openblas* ]]; then
  echo "bootstrap: warning: libblas.so.3 is $blas, not OpenBLAS; LibTorch will be slow" >&2
fi
