#!/usr/bin/env bash
# nmsparse's TPE against Optuna's TPESampler (defaults) and random search on Branin, Hartmann-6 and a mixed 4-D
# space (issue 27; docs/benchmarks.md, "TPE against Optuna"). Builds tpe_propose (the sampler library nmserver's
# proposer calls, behind a pipe) and runs tpe_vs_optuna.py, which prints median regrets, the near-best share
# and one-sided Mann-Whitney p-values.
#
# Usage: PYTHON=/path/to/python bench/tpe_vs_optuna/tpe_vs_optuna.sh [tpe_vs_optuna.py flags] [-- tpe_propose flags]
#   PYTHON needs optuna, scipy and numpy (PyPI), e.g. python3 -m venv /tmp/v && /tmp/v/bin/pip install optuna scipy
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-python3}
if ! "$python" -c 'import optuna, scipy, numpy' 2>/dev/null; then
  echo "tpe_vs_optuna: $python lacks optuna, scipy or numpy (set PYTHON to a venv that has them)" >&2
  exit 1
fi
bazel build --jobs=1 --disk_cache="$HOME/.cache/nmsparse-bazel-disk" //bench/tpe_vs_optuna:tpe_propose >&2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tpe_vs_optuna.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -L "$(bazel info bazel-bin 2>/dev/null)/bench/tpe_vs_optuna/tpe_propose" "$tmp/"  # A rebuild cannot change it.
"$python" -c 'import optuna, platform; print(f"optuna {optuna.__version__}, {platform.node()}, {platform.processor()}")'
"$python" bench/tpe_vs_optuna/tpe_vs_optuna.py "$tmp/tpe_propose" "$@"
