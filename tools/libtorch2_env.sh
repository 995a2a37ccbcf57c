#!/usr/bin/env bash
# Makes pip's LibTorch 2.x (the GPU nodes' version, with CUDA) available for the CMake build, idempotently:
# a virtual environment with torch==$NMSPARSE_TORCH_VERSION in a cache directory that survives fresh clones on
# the same machine (about 4.6 GB with its nvidia-* CUDA wheels; pip's own cache keeps a re-install offline).
# Prints the torch package directory (the CMake prefix: share/cmake/Torch, lib/, include/).
# On a GPU node whose Python already has torch (no network), NMSPARSE_TORCH_PYTHON=/path/to/python uses it.
set -euo pipefail
if [[ -n "${NMSPARSE_TORCH_PYTHON:-}" ]]; then
  "$NMSPARSE_TORCH_PYTHON" -W ignore -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null
  exit
fi
version=${NMSPARSE_TORCH_VERSION:-2.11.0}
venv=${NMSPARSE_TORCH_VENV:-${HOME}/.cache/nmsparse/torch-${version}}
stamp="$venv/.nmsparse-installed"
if [[ ! -f "$stamp" ]]; then
  echo "libtorch2: installing torch==$version into $venv (once per machine)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "torch==$version" >&2
  touch "$stamp"
fi
# Another install into the venv (timm, say) may have replaced torch: the build must see the version it asks for.
installed=$("$venv/bin/python" -W ignore -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || true)
if [[ "$installed" != "$version" ]]; then
  echo "libtorch2: $venv has torch ${installed:-none}, not $version: reinstalling torch==$version" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check "torch==$version" >&2
fi
# torch warns on import without numpy; the path is all that is needed here.
"$venv/bin/python" -W ignore -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null
