#!/usr/bin/env bash
# Regenerates worker/trainer/testdata/timm_loss.txt with timm from PyPI (installed into the LibTorch 2.x venv of
# tools/libtorch2_env.sh, pinned by NMSPARSE_TIMM_VERSION) and fails when it differs from the committed file,
# which loss_test compares with nmsparse's losses and Mixup/CutMix (issue 24).
set -euo pipefail
cd "$(dirname "$0")/.."
torch_dir=$(bash tools/libtorch2_env.sh)
python=${NMSPARSE_TORCH_PYTHON:-$(dirname "$(dirname "$(dirname "$(dirname "$torch_dir")")")")/bin/python}
timm_version=${NMSPARSE_TIMM_VERSION:-1.0.31}
if ! "$python" -c "import timm, sys; sys.exit(timm.__version__ != '$timm_version')" 2>/dev/null; then
  "$python" -m pip install -q --disable-pip-version-check "timm==$timm_version" >&2
fi
golden=worker/trainer/testdata/timm_loss.txt
if ! diff -q "$golden" <("$python" -W ignore tools/timm_loss_golden.py) >/dev/null; then
  echo "check_timm_loss_golden: timm's losses or Mixup differ from $golden (regenerate it with" \
    "tools/timm_loss_golden.py and fix worker/trainer/loss.cc, mixup.cc)" >&2
  exit 1
fi
echo "check_timm_loss_golden: $golden equals timm $timm_version's losses and Mixup/CutMix"
