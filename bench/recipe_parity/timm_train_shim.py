#!/usr/bin/env python3
"""Runs timm's own train.py on a chosen device, for bench/recipe_parity.sh.

The train.py of timm 1.0.31 is in neither its wheel nor its sdist. The copy this bench was run with is
huggingface/pytorch-image-models' train.py at commit 2aabaef039d918d453b58714ab84562609981112 (2023, Apache-2.0;
49,789 bytes), which imports and runs unchanged against timm 1.0.31 and torch 2.11 except for the device: it
has no --device option (timm.utils.init_distributed_device then picks CUDA) and its train_one_epoch and
validate take `device=torch.device('cuda')` as a default that main() never overrides. This shim, not an edit
of the file, fixes only that: it loads train.py as a module, sets args.device through the parser's defaults
and rebinds those two defaults to the requested device, then calls train.py's main(). Every other argument
goes to train.py as given.

Usage: timm_train_shim.py --train-py PATH [--device cpu] TRAIN_PY_ARGS...
"""
import argparse
import runpy
import sys

import torch


def main():
    own = argparse.ArgumentParser(add_help=False)
    own.add_argument('--train-py', required=True)
    own.add_argument('--device', default='cuda')
    shim_args, train_args = own.parse_known_args()
    sys.argv = [shim_args.train_py] + train_args
    script = runpy.run_path(shim_args.train_py, run_name='timm_train')  # defines, does not run main()
    device = torch.device(shim_args.device)
    script['parser'].set_defaults(device=shim_args.device)  # what init_distributed_device reads
    for name in ('train_one_epoch', 'validate'):
        fn = script[name]
        fn.__defaults__ = tuple(device if isinstance(d, torch.device) else d for d in fn.__defaults__)
    script['main']()


if __name__ == '__main__':
    main()
