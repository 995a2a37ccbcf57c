"""Prints timm's image transforms on images made from a formula: the golden file
worker/trainer/data/transforms/testdata/timm_transforms.txt, which transforms_test compares with nmsparse's
worker/trainer/data/transforms/ (issue 23). Pillow resizes (crop then resize, as torchvision's resized_crop),
timm's evaluation transform before ToTensor, torchvision's colour adjustments at fixed factors, and 10^4 draws
of timm's RandomResizedCrop windows and RandomErasing boxes for the distribution (KS) tests. Run by
tools/check_timm_goldens.sh.
"""
import random

import torch
from PIL import Image
import torchvision.transforms.functional as F
from timm.data import create_transform
from timm.data.random_erasing import RandomErasing
from timm.data.transforms import RandomResizedCropAndInterpolation

FILTERS = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC}


def test_image(w, h):
    # The same formula as transforms_test.cc's TestImage: smooth ramps with wrapping edges.
    data = bytes(((x * x * 3 + y * y * 5 + x * y * (c + 1)) // 16 + 50 * c) & 255
                 for y in range(h) for x in range(w) for c in range(3))
    return Image.frombytes("RGB", (w, h), data)


def hexed(img):
    return img.convert("RGB").tobytes().hex()


def resize_cases():
    for name in FILTERS:
        for (w, h, box, ow, oh) in [(97, 61, None, 40, 30), (31, 23, None, 70, 50), (97, 61, (10, 5, 70, 50), 32, 32),
                                    (97, 61, (3, 0, 97, 61), 20, 80), (24, 18, None, 24, 18),
                                    (500, 375, (37, 20, 437, 320), 56, 56)]:
            img = test_image(w, h)
            box = box or (0, 0, w, h)
            out = img.crop(box).resize((ow, oh), FILTERS[name])
            print("resize", name, w, h, *box, ow, oh, hexed(out))


def eval_cases():
    for (size, crop_pct, interp, w, h) in [(64, 0.9, "bicubic", 97, 61), (64, 0.875, "bilinear", 61, 97),
                                           (32, 1.0, "bicubic", 40, 40), (48, 0.9, "bicubic", 500, 375)]:
        t = create_transform(input_size=size, is_training=False, crop_pct=crop_pct, interpolation=interp)
        names = [type(s).__name__ for s in t.transforms]
        assert names[-2:] == ["MaybeToTensor", "Normalize"] or names[-2:] == ["ToTensor", "Normalize"], names
        out = img = test_image(w, h)
        for step in t.transforms[:-2]:
            out = step(out)
        print("eval", size, crop_pct, interp, w, h, hexed(out))


def jitter_cases():
    img = test_image(37, 29)
    ops = {"brightness": F.adjust_brightness, "contrast": F.adjust_contrast, "saturation": F.adjust_saturation}
    for name, op in ops.items():
        for factor in (0.0, 0.6, 1.0, 1.4):
            print("jitter", name, factor, hexed(op(img, factor)))


def crop_draws():
    random.seed(0)
    for (w, h, scale, ratio) in [(500, 375, (0.08, 1.0), (3 / 4, 4 / 3)), (300, 450, (0.25, 0.8), (0.5, 2.0)),
                                 (500, 100, (0.5, 1.0), (3 / 4, 4 / 3))]:
        img = Image.new("RGB", (w, h))
        sizes = []
        # The last image is too wide for any window: timm's fallback every time, so 100 draws say it.
        for _ in range(10000 if h != 100 else 100):
            i, j, ch, cw = RandomResizedCropAndInterpolation.get_params(img, scale, ratio)
            assert 0 <= i <= h - ch and 0 <= j <= w - cw
            sizes += [cw, ch]
        print("rrc", w, h, "%r %r %r %r" % (scale + ratio), *sizes)


def erase_draws():
    torch.manual_seed(0)
    random.seed(0)
    c, h, w = 3, 96, 128
    erase = RandomErasing(probability=1.0, mode="const", max_count=1, device="cpu")
    sizes = []
    for _ in range(10000):
        x = erase(torch.ones(c, h, w))
        rows = (x[0] == 0).any(dim=1).nonzero()
        cols = (x[0] == 0).any(dim=0).nonzero()
        sizes += [int(cols.numel()), int(rows.numel())]
    print("erase", w, h, *sizes)


resize_cases()
eval_cases()
jitter_cases()
crop_draws()
erase_draws()
