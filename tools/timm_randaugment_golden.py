"""Prints timm's RandAugment ops on fixed images: the golden file
worker/trainer/data/randaugment/testdata/timm_randaugment.txt, which rand_augment_test compares with nmsparse's
worker/trainer/data/randaugment/ (issue 23). Each op of timm.data.auto_augment is called directly with fixed
arguments (no random draw), and each level function with its random negation held off. Run by
tools/check_timm_goldens.sh.

Lines:
  image NAME W H BASE64             an input (RGB, row-major)
  op NAME IMAGE INTERP ARG BASE64   timm's NAME_TO_OP[NAME](IMAGE, ARG, resample=INTERP, fillcolor=FILL)
  level NAME MAGNITUDE ARG          timm's LEVEL_TO_ARG[NAME](MAGNITUDE) before negation
  fill R G B                        the fill colour of the geometric ops
"""
import base64
import random

import numpy as np
from PIL import Image
import timm.data.auto_augment as aa

W, H = 24, 18
FILL = (124, 116, 104)  # timm's img_mean for IMAGENET_DEFAULT_MEAN: round(255 * mean)


def gradient_noise(seed, lo, hi, w=W, h=H):
    # Gradients in each channel plus noise, scaled into [lo, hi]: every op sees edges, flat runs and texture.
    rng = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    base = np.stack([x / (w - 1), y / (h - 1), (x + y) / (w + h - 2)], axis=-1)
    img = 0.8 * base + 0.2 * rng.rand(h, w, 3)
    return Image.fromarray(np.round(lo + (hi - lo) * img).astype(np.uint8), "RGB")


def sparse_values():
    # Three values per channel, one of them in a single pixel: Equalize's table passes 255 (Pillow clips it),
    # and a flat channel (blue) takes the identity paths of AutoContrast and Equalize.
    img = np.zeros((H, W, 3), dtype=np.uint8)
    img[:, : W // 2 + 3, 0] = 10
    img[0, 0, 0] = 200
    img[:, :, 1] = np.where(np.arange(W) % 3 == 0, 90, 30)[None, :]
    img[:, :, 2] = 77
    return Image.fromarray(img, "RGB")


IMAGES = {
    "full": gradient_noise(1, 0, 255),
    "narrow": gradient_noise(2, 60, 141),  # a low-contrast image: AutoContrast and Equalize stretch it
    "square": gradient_noise(3, 0, 255, 16, 16),  # Pillow rotates a square image by 90 degrees exactly
    "sparse": sparse_values(),
}

# Each op at the ends of its argument range and between; the narrow image only where its histogram matters.
POINT = {
    "full": [("AutoContrast", [0]), ("Equalize", [0]), ("Invert", [0]), ("Posterize", [0, 1, 3, 4, 8]),
             ("Solarize", [0, 26, 128, 256]), ("SolarizeAdd", [0, 55, 110]), ("Color", [0.1, 0.55, 1.9]),
             ("Contrast", [0.1, 1.9]), ("Brightness", [0.1, 0.55, 1.9]), ("Sharpness", [0.1, 0.55, 1.9])],
    "narrow": [("AutoContrast", [0]), ("Equalize", [0]), ("Contrast", [0.37, 1.63]), ("Color", [1.45])],
    "square": [],
    "sparse": [("AutoContrast", [0]), ("Equalize", [0]), ("Contrast", [1.9])],
}
GEOMETRIC = [("Rotate", [-30.0, 13.5, 90.0, 180.0]), ("ShearX", [-0.3, 0.135]), ("ShearY", [0.3]),
             ("TranslateXRel", [-0.45, 0.2]), ("TranslateYRel", [0.135])]
INTERPS = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC}


def encoded(img):
    return base64.b64encode(np.asarray(img.convert("RGB"), dtype=np.uint8).tobytes()).decode()


def posterize(img, bits):
    # Pillow >= 10 refuses bits=0 (ImageOps.posterize raises); older Pillow kept no bits. timm's level
    # functions give 0 bits at PosterizeIncreasing m>=10 and Posterize m<2.5, so the golden states the
    # older arithmetic (mask 0) that nmsparse keeps.
    if bits == 0:
        return img.point(lambda v: 0)
    return aa.posterize(img, bits)


def main():
    for name, img in IMAGES.items():
        print("image", name, img.width, img.height, encoded(img))
    print("fill", *FILL)
    for image_name, img in IMAGES.items():
        for name, args in POINT[image_name]:
            for arg in args:
                fn = posterize if name == "Posterize" else aa.NAME_TO_OP[name]
                out = fn(img, arg) if name not in ("AutoContrast", "Equalize", "Invert") else fn(img)
                print("op", name, image_name, "none", repr(arg), encoded(out))
    geometric = [("full", name, args) for name, args in GEOMETRIC] + [("square", "Rotate", [90.0, -90.0, 45.0])]
    for image_name, name, args in geometric:
        for arg in args:
            for interp_name, interp in INTERPS.items():
                out = aa.NAME_TO_OP[name](IMAGES[image_name], arg, resample=interp, fillcolor=FILL)
                print("op", name, image_name, interp_name, repr(arg), encoded(out))
    random.random = lambda: 0.0  # _randomly_negate negates when random() > 0.5: never
    for name in aa.LEVEL_TO_ARG:
        if name not in aa._RAND_TRANSFORMS and name not in aa._RAND_INCREASING_TRANSFORMS:
            continue
        fn = aa.LEVEL_TO_ARG[name]
        if fn is None:
            continue
        for m in [0.0, 0.3, 1.0, 2.5, 4.9, 5.0, 7.3, 9.0, 9.99, 10.0, 15.0, 30.0]:
            print("level", name, repr(m), repr(fn(m, {"translate_pct": 0.45})[0]))


if __name__ == "__main__":
    main()
