#!/usr/bin/python3
"""The PyTorch-from-Python baseline of bench/nmtrain_vs_pytorch.sh (CPU) and bench/vit_gpu_vs_pytorch.sh (GPU):
a ViT in timm's VisionTransformer layout (patch embedding, class token, pre-norm blocks, head on the class
token) trained with the recipe nmtrain uses (AdamW with timm's weight-decay groups, label-smoothed soft-target
cross-entropy), optionally under bf16 autocast. Data: Fashion-MNIST (decoded and normalised before timing) or,
with --synthetic, random images of the model's shape already on the device. Prints one JSON line with the
training throughput; the first --warmup-steps steps are not timed (with --compile: torch.compile's
compilation among them), and the BLAS and vector ISA ATen runs on.
"""
import argparse
import gzip
import json
import math
import re
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        attn = ((q * self.scale) @ k.transpose(-2, -1)).softmax(-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, dim * 4)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


# timm's shapes of the models nmtrain's catalogue shares with these benchmarks.
MODELS = {
    "vit_micro_patch4_28": dict(img=28, patch=4, chans=1, classes=10, dim=64, depth=4, heads=4),
    "vit_tiny_patch16_224": dict(img=224, patch=16, chans=3, classes=1000, dim=192, depth=12, heads=3),
    "vit_small_patch16_224": dict(img=224, patch=16, chans=3, classes=1000, dim=384, depth=12, heads=6),
    "vit_base_patch16_224": dict(img=224, patch=16, chans=3, classes=1000, dim=768, depth=12, heads=12),
}


class Vit(nn.Module):
    def __init__(self, img, patch, chans, classes, dim, depth, heads):
        super().__init__()
        self.patch_embed = nn.Conv2d(chans, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, (img // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x)[:, 0])


def load_data(a, shape, classes, device):
    """(images, labels) on `device`: Fashion-MNIST normalised as nmtrain does, or random images of `shape`."""
    if a.synthetic:
        gen = torch.Generator().manual_seed(1)
        return (torch.randn((a.images, *shape), generator=gen).to(device),
                torch.randint(0, classes, (a.images,), generator=gen).to(device))
    images = read_idx(f"{a.data}/train-images-idx3-ubyte.gz")[: a.images]
    labels = read_idx(f"{a.data}/train-labels-idx1-ubyte.gz")[: a.images]
    x = (torch.from_numpy(images.copy()).float().div(255).unsqueeze(1) - 0.2860) / 0.3530
    return x.to(device), torch.from_numpy(labels.astype(np.int64)).to(device)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="vit_micro_patch4_28", choices=sorted(MODELS))
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--synthetic", action="store_true", help="random images of the model's shape")
    p.add_argument("--images", type=int, default=4096)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--bf16", action="store_true", help="forward passes under bf16 autocast, loss in fp32")
    p.add_argument("--compile", action="store_true", help="train torch.compile(model) (PyTorch 2.x)")
    p.add_argument("--warmup-steps", type=int, default=2)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    shape = MODELS[a.model]
    classes = shape["classes"]
    x, y = load_data(a, (shape["chans"], shape["img"], shape["img"]), classes, a.device)
    model = Vit(**shape).to(a.device)
    decay = [p for n, p in model.named_parameters() if p.ndim > 1 and n not in ("pos_embed", "cls_token")]
    no_decay = [p for n, p in model.named_parameters() if not (p.ndim > 1 and n not in ("pos_embed", "cls_token"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=2e-3)
    device_type = torch.device(a.device).type
    step_model = torch.compile(model) if a.compile else model
    sync = torch.cuda.synchronize if device_type == "cuda" else (lambda: None)
    steps = a.images // a.batch
    perm = torch.randperm(a.images).to(a.device)
    timed_images, start = 0, None
    for step in range(steps):
        if step == a.warmup_steps:
            sync()
            start = time.perf_counter()
        idx = perm[step * a.batch:(step + 1) * a.batch]
        targets = torch.full((a.batch, classes), 0.1 / classes, device=a.device).scatter_(
            1, y[idx].unsqueeze(1), 1 - 0.1 + 0.1 / classes)
        with torch.autocast(device_type, dtype=torch.bfloat16, enabled=a.bf16):
            logits = step_model(x[idx])
        loss = torch.sum(-targets * F.log_softmax(logits.float(), -1), -1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if start is not None:
            timed_images += a.batch
    sync()
    seconds = time.perf_counter() - start
    print(json.dumps({"impl": "pytorch", "torch": torch.__version__, "model": a.model, "device": a.device,
                      "bf16": a.bf16, "compile": a.compile, "images_per_s": timed_images / seconds,
                      "loss": loss.item(), "threads": a.threads, "blas": blas_info(),
                      "cpu_capability": cpu_capability()}))


def blas_info():
    """The BLAS this torch was built with (torch.__config__: "mkl", "open"), as far as it says."""
    found = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    return found.group(1) if found else "unknown"


def cpu_capability():
    """The vector ISA ATen's CPU kernels dispatch to ("AVX512", "AVX2"); PyTorch 2.x only."""
    get = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
    return get() if get else "unknown"


if __name__ == "__main__":
    main()
