#!/usr/bin/env python3
"""Python's side of bench/interop_bench.sh: a ViT-B/16 of random weights (timm's vit_base_patch16_224, seed 0)
saved and loaded ROUNDS times with torch.save / torch.load (weights_only, timm's default) and safetensors'
save_file / load_file, each the median wall-clock seconds, printed as "NAME SECONDS" lines. Also leaves the
files in DIR (vit_b16.safetensors, vit_b16.pth) for nmtrain to load.
  interop_bench.py DIR ROUNDS
"""
import statistics
import sys
import time

import safetensors.torch
import timm
import torch


def timed(fn, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    folder, rounds = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(0)
    state = {k: v.contiguous() for k, v in timm.create_model("vit_base_patch16_224").state_dict().items()}
    st, pth = folder + "/vit_b16.safetensors", folder + "/vit_b16.pth"
    print("params %d" % sum(v.numel() for v in state.values()))
    print("safetensors_save_file %.4f" % timed(lambda: safetensors.torch.save_file(state, st), rounds))
    print("safetensors_load_file %.4f" % timed(lambda: safetensors.torch.load_file(st), rounds))
    print("torch_save %.4f" % timed(lambda: torch.save(state, pth), rounds))
    print("torch_load %.4f" % timed(lambda: torch.load(pth, weights_only=True), rounds))


if __name__ == "__main__":
    main()
