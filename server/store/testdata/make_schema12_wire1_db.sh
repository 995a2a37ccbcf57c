#!/bin/bash
# How schema12_wire1.db was written, by the nmserver and nmctl of commit 1b4dcd1 (store schema 12, wire version
# 1: the spec as v1.ExperimentSpec messages): sweeps with a grid, QKV following N:M and pinned, random axes,
# ASHA, TPE, a semi-structured section, --set on a single run, a flat reference config, and a cancelled run.
# store/legacy_migration_test opens it with today's code. Usage: make_schema12_wire1_db.sh NMSERVER NMCTL OUT_DB
set -euo pipefail
nmserver=$1; nmctl=$2; db=$3
repo=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
rm -f "$db" "$db-wal" "$db-shm"
log=$tmp/nmserver.log
"$nmserver" --listen=127.0.0.1:0 --db="$db" --schedule_interval_ms=200 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  address=$(sed -n 's/^nmserver listening on \(.*\)$/\1/p' "$log"); [[ -n "$address" ]] && break; sleep 0.1
done
export NMSPARSE_COORDINATOR="$address"
cat > $tmp/qkv_sweep.yaml <<'Y'
name: qkv-carry
base:
  name: qkv-carry
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 8}
  schedule: {epochs: 3}
  sparsity: {sparsity_type: STRUCTURED_NM, decay_type: EXP, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FF+QKV}
grid:
  sparsity.m_sparsity: [4, 8]
  pinned:
    free: {sparsity.sparsity_loc: FF+QKV}
    pinned_qkv: {sparsity.n_sparsity_qkv: 1, sparsity.m_sparsity_qkv: 4}
random:
  optimizer.lr: {min: 1.0e-4, max: 1.0e-2, log: true}
num_samples: 2
seed: 3
Y
"$nmctl" submit "$repo/tests/testdata/e2e_sweep.yaml"
"$nmctl" submit $tmp/qkv_sweep.yaml
"$nmctl" submit "$repo/tests/testdata/asha_sweep.yaml"
"$nmctl" submit "$repo/tests/testdata/tpe_sweep.yaml"
"$nmctl" submit "$repo/tests/testdata/e2e_semi_structured_sweep.yaml"
"$nmctl" submit "$repo/tests/testdata/resume_fork_run.yaml" --set schedule.epochs=3 --set sparsity.m_sparsity=8
"$nmctl" submit "$repo/schemas/examples/reference_vit_base_training.yaml" || true
"$nmctl" cancel 1
"$nmctl" runs
kill $pid; wait $pid || true
trap - EXIT
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;"
