#!/usr/bin/env bash
# A stand-in for nvidia-smi, for tests only: reports $FAKE_GPU_COUNT (default 8) H100s in the two forms
# nmworker asks for (worker/agent/slots.h).
count=${FAKE_GPU_COUNT:-8}
case "$*" in
  *--query-gpu=index,name,memory.total*)
    for ((i = 0; i < count; i++)); do echo "$i, NVIDIA H100 80GB HBM3, 81559"; done ;;
  -L)
    for ((i = 0; i < count; i++)); do echo "GPU $i: NVIDIA H100 80GB HBM3 (UUID: GPU-fake-$i)"; done ;;
  *) echo "fake nvidia-smi: unsupported arguments: $*" >&2; exit 1 ;;
esac
