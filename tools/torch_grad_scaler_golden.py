"""Prints torch.amp.GradScaler's scale and growth tracker over fixed sequences of finite and inf/NaN steps, and
its unscaled gradients: the golden file worker/trainer/testdata/torch_grad_scaler.txt, which loss_scaler_test
compares with nmsparse's worker/trainer/precision/loss_scaler.h (issue 24). Run by tools/check_timm_goldens.sh.
"""
import torch

# Per step, the gradient the backward pass produced: F finite, I +inf, N NaN.
SEQUENCES = [
    (3, "FFFFFFIFFFIIFFFFNFFFFFFF"),
    (2000, "F" * 1999 + "F" + "F" * 5 + "I" + "F" * 3),
]


def run(interval, steps):
    param = torch.nn.Parameter(torch.zeros(3))
    opt = torch.optim.SGD([param], lr=0.0)
    scaler = torch.amp.GradScaler("cpu", growth_interval=interval)
    scales, trackers = [], []
    for kind in steps:
        bad = {"F": 1.0, "I": float("inf"), "N": float("nan")}[kind]
        param.grad = None
        scaler.scale((param * torch.tensor([0.5, -3.0, bad])).sum()).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        trackers.append(scaler._get_growth_tracker())
    return scales, trackers


for interval, steps in SEQUENCES:
    scales, trackers = run(interval, steps)
    print("sequence", interval, steps)
    print("scales", " ".join("%.9g" % s for s in scales))
    print("trackers", " ".join(str(t) for t in trackers))

# Unscaling: the gradients divided by the scale through GradScaler's float32 inverse.
scaler = torch.amp.GradScaler("cpu", init_scale=3.0)
param = torch.nn.Parameter(torch.zeros(4))
opt = torch.optim.SGD([param], lr=0.0)
scaler.scale((param * torch.tensor([1.0, -7.0, 0.1, 65504.0])).sum()).backward()
scaler.unscale_(opt)
print("unscale 3", " ".join("%.9g" % v for v in param.grad.tolist()))
