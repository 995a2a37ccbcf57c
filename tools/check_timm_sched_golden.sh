#!/usr/bin/env bash
# Regenerates worker/trainer/testdata/timm_lr_schedules.txt with timm from PyPI (installed into the LibTorch
# 2.x venv of tools/libtorch2_env.sh, pinned by NMSPARSE_TIMM_VERSION) and fails when it differs from the
# committed file, which lr_scheduler_test compares with nmsparse's schedulers (issue 24).
set -euo pipefail
cd "$(dirname "$0")/.."
torch_dir=$(bash tools/libtorch2_env.sh)
python=${NMSPARSE_TORCH_PYTHON:-$(dirname "$(dirname "$(dirname "$(dirname "$torch_dir")")")")/bin/python}
timm_version=${NMSPARSE_TIMM_VERSION:-1.0.31}
if ! "$python" -c "import timm, sys; sys.exit(timm.__version__ != '$timm_version')" 2>/dev/null; then
  "$python" -m pip install -q --disable-pip-version-check "timm==$timm_version" >&2
fi
golden=worker/trainer/testdata/timm_lr_schedules.txt
# The first line names the torch build, which does not change timm's schedules.
if ! diff -u <(tail -n +2 "$golden") <("$python" -W ignore tools/timm_sched_golden.py | tail -n +2); then
  echo "check_timm_sched_golden: timm's learning rates differ from $golden (regenerate it with" \
    "tools/timm_sched_golden.py and fix worker/trainer/lr_scheduler.cc)" >&2
  exit 1
fi
echo "check_timm_sched_golden: $golden equals timm $timm_version's create_scheduler_v2 rates"
