"""Prints timm's ModelEmaV2 (the EMA the reference's train.py keeps with --model-ema) on a fixed sequence of
weights: the golden file worker/trainer/testdata/timm_ema.txt, which model_ema_test compares with nmsparse's
worker/trainer/model_ema.h (issue 24). A Linear(3, 2) (parameters weight, bias, in that order) starts at
`init`; before each update its parameters are set to the step's weights. Run by tools/check_timm_goldens.sh.
"""
import math

import torch
from timm.utils import ModelEmaV2

STEPS = 40


def fmt(t):
    return " ".join("%.9g" % v for v in t.reshape(-1).tolist())


def weights(k):
    # Moves by O(1) per step, so that the EMA differs visibly from both the start and the latest weights;
    # below 1 in magnitude, where a float32 ulp (6e-8) is within the test's 1e-7.
    return torch.tensor([0.9 * math.sin(0.37 * i + 1.3 * k) for i in range(8)], dtype=torch.float32)


def run(decay):
    model = torch.nn.Linear(3, 2)
    params = [model.weight, model.bias]

    def load(flat):
        with torch.no_grad():
            params[0].copy_(flat[:6].view(2, 3))
            params[1].copy_(flat[6:])

    load(weights(-1))
    ema = ModelEmaV2(model, decay=decay)
    print("ema %r init %s" % (decay, fmt(weights(-1))))
    for k in range(STEPS):
        load(weights(k))
        ema.update(model)
        flat = torch.cat([p.detach().reshape(-1) for p in ema.module.parameters()])
        print("ema %r step %s %s" % (decay, fmt(weights(k)), fmt(flat)))


if __name__ == "__main__":
    for decay in (0.9998, 0.9):
        run(decay)
