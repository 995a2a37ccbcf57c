"""Test-made ImageNet-sized JPEGs for the data loader benchmark: ROOT/train/class_<k>/<i>.JPEG, 500x375,
quality 90 (as most of ImageNet's), a smooth gradient with texture and a few shapes so that they compress like
photographs rather than noise or flat colour. Pillow only.

Usage: make_jpegs.py ROOT [COUNT=200] [CLASSES=4]
"""
import os
import random
import sys

from PIL import Image, ImageDraw, ImageFilter


def make_image(seed, width=500, height=375):
    rnd = random.Random(seed)
    base = Image.linear_gradient("L").resize((width, height))
    channels = [base.rotate(rnd.uniform(0, 360)).resize((width, height)) for _ in range(3)]
    image = Image.merge("RGB", channels)
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x0, y0 = rnd.randrange(width), rnd.randrange(height)
        x1, y1 = x0 + rnd.randrange(20, 200), y0 + rnd.randrange(20, 150)
        fill = tuple(rnd.randrange(256) for _ in range(3))
        (draw.ellipse if rnd.random() < 0.5 else draw.rectangle)((x0, y0, x1, y1), fill=fill)
    noise = Image.effect_noise((width, height), 40).convert("RGB")
    return Image.blend(image, noise, 0.15).filter(ImageFilter.SMOOTH)


def main():
    root = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    classes = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    for i in range(count):
        folder = os.path.join(root, "train", "class_%d" % (i % classes))
        os.makedirs(folder, exist_ok=True)
        make_image(i).save(os.path.join(folder, "%04d.JPEG" % i), quality=90)


if __name__ == "__main__":
    main()
