#!/usr/bin/env bash
# The worker-to-GPU path, end to end without a GPU: the real nmserver and nmworker, GPUs discovered through a
# stand-in nvidia-smi on PATH, and a stand-in trainer that records the argv and environment every rank gets
# (tests/testdata/recording_trainer.sh). For runs of 1, 2 and 8 GPUs, for `--gpus 0,2` and `--gpus 2`, and for
# CPU slots, every rank must get --device cuda (cpu on CPU slots), CUDA_VISIBLE_DEVICES listing the run's
# GPUs in rank order and CUDA_DEVICE_ORDER=PCI_BUS_ID (nvidia-smi's numbering), with LOCAL_RANK = RANK: nmtrain
# opens cuda:LOCAL_RANK, its own slot's GPU (the rule nmtrain applies is tested in
# worker/trainer/device/device_choice_test.cc). A run on GPU slots whose trainer reports the CPU fails instead of
# succeeding slowly.
#
# Usage: gpu_device_test.sh NMSERVER NMWORKER NMCTL SWEEP_YAML FAKE_NVIDIA_SMI RECORDING_TRAINER
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); sweep_yaml=$(realpath "$4")
fake_smi=$(realpath "$5"); trainer=$(realpath "$6")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/gpu.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
mkdir -p "$tmp/bin"
ln -s "$fake_smi" "$tmp/bin/nvidia-smi"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

start_worker() {  # start_worker NAME NMWORKER_FLAGS...: with the stand-in nvidia-smi (8 GPUs) on PATH.
  local name=$1; shift
  PATH="$tmp/bin:$PATH" FAKE_GPU_COUNT=8 "$nmworker" --coordinator="$NMSPARSE_COORDINATOR" --work_dir="$work" \
    --trainer="$trainer" --host="$name" "$@" >"$tmp/nmworker-$name.log" 2>&1 &
  worker_pid[$name]=$!
}

switch_worker() {  # Stops every worker, then starts NAME with FLAGS.
  for w in "${!worker_pid[@]}"; do stop_worker "${worker_pid[$w]}"; unset "worker_pid[$w]"; done
  start_worker "$@"
}

submit() {  # submit NAME GPUS: two runs (dense, SR-STE 2:4) of GPUS ranks each; prints the sweep id.
  ctl submit "$sweep_yaml" --set name="$1" --set resources.gpus="$2" --set data.batch_size=64 --no-reuse --json |
    json "d['sweep']['id']"
}

# check_ranks RUN DEVICE SLOT_TO_GPU: every rank of the run got `--device DEVICE` and the environment the
# contract names; SLOT_TO_GPU maps the worker's slot indices to CUDA devices ("0,2": slot 0 is GPU 0, slot 1
# is GPU 2; "" for CPU slots).
check_ranks() {
  local run=$1 device=$2 slot_to_gpu=$3
  ctl run "$run" --json | python3 -c "
import json, sys, os
run = json.load(sys.stdin)['run']
slots = [int(s) for s in run.get('slots', [])]
gpu_of = '$slot_to_gpu'.split(',') if '$slot_to_gpu' else []
expected = ','.join(gpu_of[s] for s in slots) if gpu_of else ''
world = len(slots)
for r in range(world):
    path = os.path.join('$work', 'runs', '$run', 'rank-%d.txt' % r)
    got = dict(line.rstrip('\n').split('=', 1) for line in open(path))
    want = {'RANK': str(r), 'LOCAL_RANK': str(r), 'WORLD_SIZE': str(world), 'CUDA_VISIBLE_DEVICES': expected,
            'CUDA_DEVICE_ORDER': 'PCI_BUS_ID'}
    for key, value in want.items():
        if got[key] != value:
            sys.exit('run $run rank %d: %s=%r, expected %r' % (r, key, got[key], value))
    if ' --device $device' not in got['argv']:
        sys.exit('run $run rank %d: argv %r lacks --device $device' % (r, got['argv']))
    if gpu_of and expected.split(',')[r] != gpu_of[slots[r]]:
        sys.exit('run $run rank %d: cuda:%d is not its slot %d' % (r, r, slots[r]))
if os.path.exists(os.path.join('$work', 'runs', '$run', 'rank-%d.txt' % world)):
    sys.exit('run $run: more ranks than slots')
print('run $run: %d rank(s), CUDA_VISIBLE_DEVICES=%r, --device $device' % (world, expected), file=sys.stderr)
"
}

check_sweep() {  # check_sweep SWEEP GPUS DEVICE SLOT_TO_GPU
  local sweep=$1 gpus=$2 device=$3 map=$4
  check "sweep $sweep ($gpus x $device) succeeds" wait_runs "$sweep" "all(r['state']=='SUCCEEDED' for r in runs)" 60
  for run in $(ctl runs --sweep "$sweep" --json | json "' '.join(str(r['id']) for r in d['runs'])"); do
    check "run $run: $gpus slot(s) assigned" test "$(ctl run "$run" --json | json "len(d['run']['slots'])")" = "$gpus"
    check "run $run: every rank's device flag and environment" check_ranks "$run" "$device" "$map"
    check "run $run: nmctl run shows the devices" bash -c "'$nmctl' run '$run' | grep -q '^  devices:  $device'"
  done
}

start_server 0

# nvidia-smi finds 8 GPUs: runs of 1, 2 and 8 GPUs; slot i is GPU i.
start_worker auto8
check "the worker offers the 8 GPUs nvidia-smi reports" bash -c \
  "for i in \$(seq 100); do grep -q 'NVIDIA H100 80GB HBM3/81559MB' '$tmp/nmworker-auto8.log' && exit 0; sleep 0.1; done; exit 1"
for gpus in 1 2 8; do check_sweep "$(submit auto-$gpus "$gpus")" "$gpus" cuda 0,1,2,3,4,5,6,7; done

# --gpus 0,2: a 2-GPU run sees GPUs 0 and 2; rank 1 opens cuda:1, which is GPU 2.
switch_worker pick --gpus=0,2
check_sweep "$(submit pick-2 2)" 2 cuda 0,2
check "rank 1 would train on GPU 2" bash -c \
  "grep -h '^CUDA_VISIBLE_DEVICES=0,2\$' '$work'/runs/*/rank-1.txt | grep -q ."

# --gpus 2: the first two GPUs nvidia-smi reports.
switch_worker count2 --gpus=2
check_sweep "$(submit count-2 2)" 2 cuda 0,1
check_sweep "$(submit count-1 1)" 1 cuda 0,1

# CPU slots: --device cpu and no GPU visible.
switch_worker cpu --gpus=none --cpu-slots=1
check_sweep "$(submit cpu-1 1)" 1 cpu ""

# A trainer that reports the CPU on GPU slots (a CPU-only nmtrain, say): the run fails and says why.
for w in "${!worker_pid[@]}"; do stop_worker "${worker_pid[$w]}"; unset "worker_pid[$w]"; done
FAKE_REPORTED_DEVICE=cpu start_worker liar --gpus=1
liar=$(submit liar-1 1)
check "a GPU run that trained on the CPU fails" wait_runs "$liar" "all(r['state']=='FAILED' for r in runs)" 60
check "and the message says so" bash -c \
  "'$nmctl' runs --sweep '$liar' --json | grep -q 'placed on GPU slots but rank 0 reported device'"

finish
