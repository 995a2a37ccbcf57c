#!/usr/bin/env bash
# The host-sync lint (tools/check_host_syncs.sh) over the code a training step runs, and proof that it
# catches a new host read: the same tree with an .item() added to the optimizer must fail it.
set -euo pipefail
tools/check_host_syncs.sh
tree="${TEST_TMPDIR:-$(mktemp -d)}/tree"
rm -rf "$tree"
mkdir -p "$tree"
cp -rL tools worker "$tree/"
echo 'double AddedRead(const torch::Tensor& t) { return t.sum().item<double>(); }' >> "$tree/worker/trainer/optim/optimizer.cc"
if "$tree/tools/check_host_syncs.sh" 2> "$tree/lint.err"; then
  echo "FAIL: the lint accepted a new .item() in worker/trainer/optim/optimizer.cc" >&2
  exit 1
fi
grep -q "worker/trainer/optim/optimizer.cc:.*AddedRead" "$tree/lint.err" || { cat "$tree/lint.err" >&2; exit 1; }
echo "a new .item() is caught"
