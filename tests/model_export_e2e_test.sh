#!/usr/bin/env bash
# nmctl export-model end to end (issue 39, docs/interop.md): the real nmserver (with tokens, on loopback),
# one nmworker and nmtrain train a dense and an SR-STE 2:4 run; `nmctl export-model` fetches each run's
# deployable model through the coordinator from the worker's work dir, and
# - the four files equal byte for byte what `nmtrain --export` writes from the same checkpoint by hand;
# - every block sparsity.json lists is exactly N:M in model.safetensors (read with Python's standard library);
# - with the timm venv of tools/libtorch2_env.sh present, timm loads the SR-STE export strictly and finds it
#   N:M (tools/timm_export_golden.py with NMSPARSE_EXPORT_DIR);
# - the errors name the run: an unknown run (exit 3), a run that failed before its first checkpoint (the
#   worker's answer), a worker token (no role for it), and a worker that is gone; none leaves a file;
# - nmctl run names the checkpoint and the export command;
# - fine-tuning from an exported file puts the file's SHA-256 into the run's hash: one spec and one path with
#   two contents give two hashes; a digest that is not the file's is refused by nmctl, or by nmtrain (exit 2)
#   where nmctl cannot read the file.
#
# Usage: model_export_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN SWEEP_YAML TIMM_EXPORT_GOLDEN_PY
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
sweep_yaml=$(realpath "$5"); golden_py=$(realpath "$6")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/model_export_e2e.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
tokens="$tmp/tokens"
mkdir -p "$work" "$tokens"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

"$nmserver" init --db="$db" --token_dir="$tokens" >"$tmp/init.log" 2>&1
"$nmserver" token add alice --role user --token_file="$tokens/alice.token" --db="$db" >/dev/null
export NMSPARSE_TOKEN_FILE="$tokens/alice.token"
start_server 0
start_worker w1 --token_file="$tokens/worker.token"

sweep=$(ctl submit "$sweep_yaml" --json | json "d['sweep']['id']")
check "the sweep is submitted" test -n "$sweep"
check "dense and SR-STE succeed, no_data fails" wait_runs "$sweep" \
  "len(runs) == 3 and sorted(r['state'] for r in runs) == ['FAILED', 'SUCCEEDED', 'SUCCEEDED']" 240
run_of() {  # run_of LABEL
  ctl runs --sweep "$sweep" --json | json "[r['id'] for r in d['runs'] if r['labels']['recipe'] == '$1'][0]"
}
dense=$(run_of dense); srste=$(run_of srste_2_4); no_data=$(run_of no_data)

# The N:M check of an export without torch: model.safetensors' header and float32 data, sparsity.json's blocks.
exactly_nm() {  # exactly_nm DIR: prints "K blocks exactly N:M", exits 1 on the first block that is not
  python3 - "$1" <<'PY'
import array, json, struct, sys
d = sys.argv[1]
raw = open(f"{d}/model.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header, base = json.loads(raw[8:8 + n]), 8 + n
layers = json.load(open(f"{d}/sparsity.json"))["layers"]
for layer in layers:
    t = header[layer["parameter"]]
    assert t["dtype"] == "F32", t
    values = array.array("f", raw[base + t["data_offsets"][0]:base + t["data_offsets"][1]])
    cols = t["shape"][1]
    begin, end = layer["rows"]
    for row in range(begin, end):
        w = values[row * cols:(row + 1) * cols]
        for g in range(0, cols, layer["m"]):
            if sum(1 for v in w[g:g + layer["m"]] if v != 0) != layer["n"]:
                sys.exit(f"{layer['parameter']} row {row} group {g // layer['m']} is not {layer['n']}:{layer['m']}")
print(f"{len(layers)} blocks exactly N:M")
PY
}

for run in "$dense" "$srste"; do
  out="$tmp/export_$run"
  ctl export-model "$run" -o "$out" >"$tmp/export_$run.out" 2>&1
  check "nmctl export-model $run exits 0" test $? -eq 0
  cat "$tmp/export_$run.out" >&2
  "$nmtrain" --export "$work/runs/$run/checkpoint.pt" -o "$tmp/by_hand_$run" >"$tmp/by_hand_$run.log" 2>&1
  for f in model.safetensors config.json sparsity.json README.md; do
    check "run $run: $f equals nmtrain --export's" cmp -s "$out/$f" "$tmp/by_hand_$run/$f"
  done
  check "run $run: no partial file stays" test -z "$(ls -A "$out" | grep partial)"
  check "run $run: the worker's scratch export is gone" test -z "$(ls -A "$work/exports" 2>/dev/null)"
  nm=$(exactly_nm "$out")
  check "run $run: every sparse block is exactly N:M ($nm)" test $? -eq 0
done
check "the SR-STE export lists FF and QKV blocks" test "$(exactly_nm "$tmp/export_$srste")" != "0 blocks exactly N:M"
check "the dense export lists none" test "$(exactly_nm "$tmp/export_$dense")" = "0 blocks exactly N:M"
ctl export-model "$srste" -o "$tmp/export_bf16" --dtype bf16 --json >"$tmp/export_bf16.json"
check "--dtype bf16 halves the weights file" python3 -c "
import json, os, sys
d = json.load(open('$tmp/export_bf16.json'))
size = {f['file']: f['bytes'] for f in d['files']}
fp32 = os.path.getsize('$tmp/export_$srste/model.safetensors')
sys.exit(0 if d['run_id'] == $srste and size['model.safetensors'] < 0.6 * fp32 else 1)"

# timm itself, where its venv is (Bazel's HOME is the test's; the venv lives in the user's).
home=$(getent passwd "$(id -u)" | cut -d: -f6)
venv_python="${NMSPARSE_TORCH_VENV:-$home/.cache/nmsparse/torch-2.11.0}/bin/python"
if [[ -x "$venv_python" ]]; then
  NMSPARSE_EXPORT_DIR="$tmp/export_$srste" "$venv_python" "$golden_py" >"$tmp/timm.out" 2>&1
  check "timm loads the SR-STE export strictly and finds it N:M" test $? -eq 0
  cat "$tmp/timm.out" >&2
else
  log "no timm venv at $venv_python: timm's load is checked by tools/check_timm_goldens.sh only"
fi

expect_error() {  # expect_error DESCRIPTION EXIT PATTERN COMMAND...
  local what=$1 code=$2 pattern=$3; shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne $code ]]; then fail "$what: exit $rc, not $code ($err)"; return; fi
  if grep -q -- "$pattern" <<<"$err"; then log "ok: $what"; else fail "$what: got '$err'"; fi
}
expect_error "an unknown run" 3 "no run with id 999" ctl export-model 999 -o "$tmp/none"
expect_error "a run that failed before its first checkpoint" 1 \
  "run $no_data has no checkpoint on worker .* (w1): .*/runs/$no_data/checkpoint.pt does not exist" \
  ctl export-model "$no_data" -o "$tmp/none"
expect_error "a worker token may not export" 1 \
  "has role worker, which may not call /nmsparse.v1.Coordinator/ExportModel" \
  ctl --token-file "$tokens/worker.token" export-model "$srste" -o "$tmp/none"
expect_error "--weights takes final or ema" 2 "--weights: value 'best' is not final or ema" \
  ctl export-model "$srste" -o "$tmp/none" --weights best

# nmctl run says where each run's model is and how to export it.
ctl run "$srste" >"$tmp/run_srste.txt"
check "nmctl run names the checkpoint" grep -qF "model:    <work_dir>/runs/$srste/checkpoint.pt on worker" "$tmp/run_srste.txt"
check "nmctl run gives the export command" grep -qF "export:   nmctl export-model $srste -o DIR" "$tmp/run_srste.txt"

# Fine-tuning from an exported file (issue 39): the file's SHA-256 is in the run's content hash. One spec,
# one path, submitted twice with other contents at that path: two hashes, and the second run is not the
# first one reused.
mkdir -p "$work/weights"
weights="$work/weights/w.safetensors"
cp "$tmp/export_$dense/model.safetensors" "$weights"
cat >"$tmp/finetune.yaml" <<SPEC
name: finetune
seed: 11
model: {name: vit_nano_patch7_28, initial_checkpoint: $weights}
data: {dataset: synthetic, synthetic_size: 48, batch_size: 16, eval_subset: 16}
schedule: {epochs: 1}
resources: {cpu_threads: 1}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FFQKV}
SPEC
finetune() {  # finetune [NMCTL_FLAGS...]: submits the fine-tune spec, prints its run's id once it has ended
  local id
  id=$(ctl submit "$tmp/finetune.yaml" "$@" --json | json "d['sweep']['id']")
  wait_runs "$id" "len(runs) == 1 and runs[0]['state'] in ('SUCCEEDED', 'FAILED')" 240 >/dev/null
  ctl runs --sweep "$id" --json | json "d['runs'][0]['id']"
}
run_field() { ctl run "$1" --json | json "d['run'].get('$2', '')"; }
from_dense=$(finetune)
check "the fine-tune from the dense export succeeds" test "$(run_field "$from_dense" state)" = SUCCEEDED
dense_sha=$(sha256sum "$weights" | cut -d' ' -f1)
check "nmctl put the file's SHA-256 into the stored spec" \
  grep -qF "initial_checkpoint_sha256: $dense_sha" <<<"$(run_field "$from_dense" resolved_spec)"
cp "$tmp/export_$srste/model.safetensors" "$weights"
srste_sha=$(sha256sum "$weights" | cut -d' ' -f1)
from_srste=$(finetune)
check "the fine-tune from the other content succeeds" test "$(run_field "$from_srste" state)" = SUCCEEDED
check "the same spec from another file's content hashes differently" \
  test "$(run_field "$from_dense" content_hash)" != "$(run_field "$from_srste" content_hash)"
check "the second fine-tune is not the first one reused" \
  test "$(run_field "$from_srste" reused_from)" != "$from_dense"

# A fork that names another weights file gets that file's digest from nmctl, not its parent's (which nmtrain
# would refuse at start); a file nmctl cannot read needs the digest given, and both keys are named.
other_weights="$work/weights/other.safetensors"
cp "$tmp/export_$srste/model.safetensors" "$other_weights"
fork_sweep=$(ctl fork "$from_dense" --set "model.initial_checkpoint=$other_weights" --json | json "d['sweep']['id']")
wait_runs "$fork_sweep" "len(runs) == 1 and runs[0]['state'] in ('SUCCEEDED', 'FAILED')" 240 >/dev/null
forked=$(ctl runs --sweep "$fork_sweep" --json | json "d['runs'][0]['id']")
check "a fork from another weights file succeeds" test "$(run_field "$forked" state)" = SUCCEEDED
check "the fork's stored spec has the new file's SHA-256" \
  grep -qF "initial_checkpoint_sha256: $srste_sha" <<<"$(run_field "$forked" resolved_spec)"
expect_error "a fork from a file out of nmctl's reach needs its digest" 2 \
  "model.initial_checkpoint=../../weights/w.safetensors: nmctl cannot read .* give --set model.initial_checkpoint_sha256=DIGEST" \
  ctl fork "$from_dense" --set model.initial_checkpoint=../../weights/w.safetensors

# A file nmctl cannot read (a relative path, opened by the worker from the run directory) needs its digest;
# a wrong one passes the coordinator and nmtrain refuses it at start (exit 2), naming the file and both.
expect_error "a file out of nmctl's reach needs its digest" 2 \
  "model.initial_checkpoint_sha256 is required with model.initial_checkpoint '../../weights/w.safetensors'" \
  ctl validate "$tmp/finetune.yaml" --set model.initial_checkpoint=../../weights/w.safetensors
expect_error "a digest that is not the file's is refused by nmctl" 2 \
  "model.initial_checkpoint_sha256: $dense_sha is not the SHA-256 of $weights on this host, $srste_sha" \
  ctl validate "$tmp/finetune.yaml" --set "model.initial_checkpoint_sha256=$dense_sha"
wrong=$(finetune --set model.initial_checkpoint=../../weights/w.safetensors \
  --set "model.initial_checkpoint_sha256=$dense_sha")
check "a worker's file other than its digest fails the run" test "$(run_field "$wrong" state)" = FAILED
check "nmtrain names the file and both digests" \
  grep -qF "w.safetensors is $srste_sha, not model.initial_checkpoint_sha256 $dense_sha" \
  <<<"$(ctl logs "$wrong" 2>&1; run_field "$wrong" message)"

stop_worker "${worker_pid[w1]}"; unset 'worker_pid[w1]'
# Until the coordinator sees the stopped worker's stream close, it may still order the export, which then
# fails as the worker goes: either refusal names the worker and the run.
expect_error "a worker that is gone" 1 \
  "worker .* (w1), which holds run $srste's directory\(,\| and checkpoint,\) \(is not connected\|disconnected during the export\)" \
  ctl export-model "$srste" -o "$tmp/none"
check "no failed export left a file" test -z "$(ls -A "$tmp/none" 2>/dev/null)"
finish
