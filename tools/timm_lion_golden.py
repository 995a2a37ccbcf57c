"""Prints timm's Lion (timm.optim.Lion) on a fixed sequence of gradients: the golden file
worker/trainer/testdata/timm_lion.txt, which lion_test compares with nmsparse's worker/trainer/optim/lion.h
(issue 42; Hu et al.'s DeiT recipe trains with Lion). One parameter of 8 values starts at `init`; each step sets
its gradient to the step's values and calls step(). Both of timm's code paths (foreach and the per-tensor
loop) under two settings: DeiT's (lr 2e-4, betas (0.9, 0.99), weight decay 0.5) and a larger rate without
decay. Run by tools/check_timm_goldens.sh.
"""
import math

import torch
from timm.optim import Lion

STEPS = 20
SETTINGS = [(2e-4, 0.9, 0.99, 0.5), (1e-2, 0.95, 0.98, 0.0)]


def fmt(t):
    return " ".join("%.9g" % v for v in t.reshape(-1).tolist())


def grad(k):
    # Changes sign often, so that the momentum and the update's sign disagree at some steps.
    return torch.tensor([math.sin(0.71 * i + 1.9 * k) + 0.3 * math.cos(2.3 * k) for i in range(8)],
                        dtype=torch.float32)


def main():
    init = torch.tensor([0.8 * math.cos(0.5 * i + 0.2) for i in range(8)], dtype=torch.float32)
    for lr, b1, b2, wd in SETTINGS:
        for foreach in (False, True):
            p = torch.nn.Parameter(init.clone())
            opt = Lion([p], lr=lr, betas=(b1, b2), weight_decay=wd, foreach=foreach)
            print("lion %r %r %r %r %d init %s" % (lr, b1, b2, wd, foreach, fmt(init)))
            for k in range(STEPS):
                p.grad = grad(k)
                opt.step()
                print("lion %r %r %r %r %d step %s %s %s" % (lr, b1, b2, wd, foreach, fmt(grad(k)),
                                                            fmt(p.detach()), fmt(opt.state[p]["exp_avg"])))


if __name__ == "__main__":
    main()
