#!/usr/bin/env python3
"""The Python baselines of bench/gpu/gpu_bench.sh: timm's own model (eager, or under torch.compile) trained
with nmtrain's recipe (AdamW, label-smoothed cross-entropy, bf16 autocast) on random images already on the GPU.
Prints one JSON line: {"images_per_s": ...}. The first --warmup steps (and compilation) are not timed.
"""
import argparse
import json
import time

import timm
import torch
import torch.nn.functional as F


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--compile", action="store_true")
    a = p.parse_args()
    torch.manual_seed(0)
    model = timm.create_model(a.model, num_classes=1000).cuda().train()
    size = model.default_cfg["input_size"][-1]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05, fused=True)
    step_model = torch.compile(model) if a.compile else model
    images = torch.randn(a.batch, 3, size, size, device="cuda")
    labels = torch.randint(0, 1000, (a.batch,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = step_model(images)
        loss = F.cross_entropy(logits.float(), labels, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(a.steps):
        step()
    torch.cuda.synchronize()
    print(json.dumps({"images_per_s": a.steps * a.batch / (time.perf_counter() - start)}))


if __name__ == "__main__":
    main()
