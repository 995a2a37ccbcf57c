"""Prints timm's losses and Mixup/CutMix on fixed inputs: the golden file worker/trainer/testdata/timm_loss.txt,
which loss_test compares with nmsparse's worker/trainer/loss/loss.h and mixup.h (issue 24). Random draws are
recorded per kind (uniform, beta, int) in call order so the C++ test can replay them; the `sample` lines are
10^4 draws of timm's own numpy stream for the distribution (KS) tests. Run by tools/check_timm_goldens.sh.
"""
import math

import numpy as np
import torch
import timm.data.mixup as mx
from timm.loss import BinaryCrossEntropy, LabelSmoothingCrossEntropy, SoftTargetCrossEntropy

B, K = 4, 5
LABELS = torch.tensor([1, 3, 0, 4])


def fixed_logits():
    # The same formula as loss_test.cc's FixedLogits.
    return torch.tensor([[3.0 * math.sin(1.3 * i + 0.7 * k) for k in range(K)] for i in range(B)],
                        dtype=torch.float32)


def fixed_images():
    # [4, 1, 6, 6]; the same formula as loss_test.cc's FixedImages.
    return torch.tensor([[[[float(100 * b + 10 * y + x) for x in range(6)] for y in range(6)]] for b in range(4)],
                        dtype=torch.float32)


def fmt(t):
    return " ".join("%.9g" % v for v in t.reshape(-1).tolist())


def losses():
    x = fixed_logits()
    dense = mx.mixup_target(LABELS, K, lam=0.7, smoothing=0.1)
    cases = [
        ("cross_entropy", torch.nn.CrossEntropyLoss()(x, LABELS)),
        ("label_smoothing_0.1", LabelSmoothingCrossEntropy(0.1)(x, LABELS)),
        ("soft_target_dense", SoftTargetCrossEntropy()(x, dense)),
        ("bce_labels_s0.1", BinaryCrossEntropy(smoothing=0.1)(x, LABELS)),
        ("bce_labels_s0.1_t0.2", BinaryCrossEntropy(smoothing=0.1, target_threshold=0.2)(x, LABELS)),
        ("bce_labels_s0.1_sum", BinaryCrossEntropy(smoothing=0.1, sum_classes=True)(x, LABELS)),
        ("bce_dense", BinaryCrossEntropy()(x, dense)),
        ("bce_dense_t0.2", BinaryCrossEntropy(target_threshold=0.2)(x, dense)),
        ("bce_dense_sum", BinaryCrossEntropy(sum_classes=True)(x, dense)),
    ]
    for name, value in cases:
        print("loss %s %r" % (name, value.item()))


def targets():
    for lam, s in [(1.0, 0.0), (0.7, 0.1), (0.3137, 0.2)]:
        print("target %r %r %s" % (lam, s, fmt(mx.mixup_target(LABELS, K, lam=lam, smoothing=s))))
    lam = torch.tensor([0.25, 1.0, 0.6, 0.9], dtype=torch.float32).unsqueeze(1)
    print("target_elem %s 0.1 %s" % (fmt(lam), fmt(mx.mixup_target(LABELS, K, lam=lam, smoothing=0.1))))


class Recorder:
    """Wraps numpy's global draws, recording their values per kind in call order."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.draws = {"uniform": [], "beta": [], "int": []}

    def rand(self, *size):
        v = self.rng.rand(*size)
        self.draws["uniform"] += np.atleast_1d(v).tolist()
        return v

    def beta(self, a, b, size=None):
        v = self.rng.beta(a, b, size=size)
        self.draws["beta"] += np.atleast_1d(v).tolist()
        return v

    def randint(self, low, high, size=None):
        v = self.rng.randint(low, high, size=size)
        self.draws["int"] += np.atleast_1d(v).tolist()
        return v

    def __enter__(self):
        self.saved = (np.random.rand, np.random.beta, np.random.randint)
        np.random.rand, np.random.beta, np.random.randint = self.rand, self.beta, self.randint
        return self

    def __exit__(self, *exc):
        np.random.rand, np.random.beta, np.random.randint = self.saved


def boxes():
    for h, w, lam, seed in [(32, 32, 0.3, 1), (32, 24, 0.8, 2), (7, 9, 0.05, 3), (224, 224, 0.5, 4)]:
        with Recorder(seed) as r:
            (yl, yh, xl, xh), corrected = mx.cutmix_bbox_and_lam((3, h, w), lam)
        print("bbox %d %d %r %s -> %d %d %d %d %r" % (h, w, lam, " ".join(map(str, r.draws["int"])), yl, yh, xl, xh,
                                                    float(corrected)))
    for h, w, lo, hi, seed in [(32, 32, 0.2, 0.8, 5), (224, 160, 0.3, 0.9, 6)]:
        with Recorder(seed) as r:
            (yl, yh, xl, xh), corrected = mx.cutmix_bbox_and_lam((3, h, w), 0.5, ratio_minmax=(lo, hi))
        print("bbox_minmax %d %d %r %r %s -> %d %d %d %d %r" % (h, w, lo, hi, " ".join(map(str, r.draws["int"])), yl,
                                                               yh, xl, xh, float(corrected)))


MODES = [
    ("batch_mixup", dict(mixup_alpha=0.8, cutmix_alpha=0.0, mode="batch")),
    ("batch_cutmix", dict(mixup_alpha=0.0, cutmix_alpha=1.0, mode="batch")),
    ("batch_switch", dict(mixup_alpha=0.8, cutmix_alpha=1.0, switch_prob=0.5, mode="batch")),
    ("pair_both", dict(mixup_alpha=0.8, cutmix_alpha=1.0, mode="pair")),
    ("elem_both", dict(mixup_alpha=0.8, cutmix_alpha=1.0, prob=0.7, mode="elem")),
    ("elem_minmax", dict(mixup_alpha=0.0, cutmix_minmax=[0.2, 0.8], mode="elem")),
]


def modes():
    for name, kw in MODES:
        for seed in range(3):
            m = mx.Mixup(label_smoothing=0.1, num_classes=K, **kw)
            with Recorder(100 + seed) as r:
                x, t = m(fixed_images(), LABELS.clone())
            print("mode %s %d" % (name, seed))
            for kind in ("uniform", "beta", "int"):
                print("draws %s %s" % (kind, " ".join(repr(float(v)) for v in r.draws[kind])))
            print("images %s" % fmt(x))
            print("targets %s" % fmt(t))


def samples():
    np.random.seed(2024)
    m = mx.Mixup(mixup_alpha=0.8, cutmix_alpha=0.0, label_smoothing=0.0, num_classes=K)
    print("sample mixup_lam_0.8 %s" % " ".join("%.6g" % m._params_per_batch()[0] for _ in range(10000)))
    c = mx.Mixup(mixup_alpha=0.0, cutmix_alpha=1.0, label_smoothing=0.0, num_classes=K)
    out = []
    for _ in range(10000):
        lam, _ = c._params_per_batch()
        out.append(mx.cutmix_bbox_and_lam((3, 32, 32), lam)[1])
    print("sample cutmix_lam_32 %s" % " ".join("%.6g" % v for v in out))
    out = []
    for _ in range(10000):
        out.append(mx.cutmix_bbox_and_lam((3, 32, 32), 0.5, ratio_minmax=(0.2, 0.8))[1])
    print("sample cutmix_minmax_lam_32 %s" % " ".join("%.6g" % v for v in out))


if __name__ == "__main__":
    torch.set_printoptions(precision=10)
    losses()
    targets()
    boxes()
    modes()
    samples()
