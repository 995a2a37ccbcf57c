"""timm's own training pipeline on the benchmark's JPEGs, as train.py feeds it: an ImageFolder, timm's
create_transform(is_training=True) with the paper's ViT-B recipe (RandomResizedCrop scale (0.08, 1) ratio
(3/4, 4/3) interpolation random, hflip 0.5, RandAugment rand-m15-n2-p1-mstd0, normalisation, random erasing
reprob 0.25 pixel) and a PyTorch DataLoader with WORKERS processes. Prints "<name> <images/s> <images per
CPU-second>" per figure:
  timm_train     the full transform through the DataLoader (WORKERS processes)
  timm_decode    PIL's open + convert("RGB") alone, in this process

Usage: timm_loader.py ROOT WORKERS [EPOCHS=3]
"""
import resource
import sys
import time

import torch
from PIL import Image
from timm.data import create_transform
from torchvision.datasets import ImageFolder


def main():
    root, workers = sys.argv[1], int(sys.argv[2])
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    torch.set_num_threads(1)
    transform = create_transform(
        224, is_training=True, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), hflip=0.5, vflip=0.0,
        auto_augment="rand-m15-n2-p1-mstd0", interpolation="random", re_prob=0.25, re_mode="pixel",
        re_count=1, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    dataset = ImageFolder(root + "/train", transform=transform)
    loader = torch.utils.data.DataLoader(dataset, batch_size=32, shuffle=True, num_workers=workers,
                                         drop_last=False)
    for _ in loader:  # Warm-up: the page cache.
        pass
    # CPU time of this process and of the workers (they exit at each epoch's end, so RUSAGE_CHILDREN counts
    # them): images per CPU-second is what a core gives, however loaded the machine is.
    cpu_start = cpu_seconds()
    start = time.perf_counter()
    images = 0
    for _ in range(epochs):
        for batch, _labels in loader:
            images += batch.shape[0]
    wall = time.perf_counter() - start
    print("timm_train %.1f %.1f" % (images / wall, images / (cpu_seconds() - cpu_start)))

    paths = [path for path, _ in dataset.samples]
    cpu_start = cpu_seconds()
    start = time.perf_counter()
    for _ in range(epochs):
        for path in paths:
            with open(path, "rb") as f:
                Image.open(f).convert("RGB")
    images = epochs * len(paths)
    print("timm_decode %.1f %.1f" % (images / (time.perf_counter() - start), images / (cpu_seconds() - cpu_start)))


def cpu_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    main()
