"""Prints timm's learning rate at every optimizer update of a set of schedules, as train.py drives the
scheduler create_scheduler_v2 builds (step_update after each update, step(epoch + 1, top1) after each
epoch), for lr_scheduler_test to compare with nmsparse's (worker/trainer/lr_scheduler.h).

Usage: python tools/timm_sched_golden.py > worker/trainer/testdata/timm_lr_schedules.txt
"""
import math
import sys
import types
import warnings

import torch
import timm
import yaml
from timm.scheduler.scheduler_factory import create_scheduler_v2, scheduler_kwargs

REFERENCE = 'schemas/testdata/reference_vit_base_training.yaml'

# train.py's defaults of the scheduler's arguments.
TRAIN_PY = dict(sched='cosine', epochs=300, decay_epochs=90, decay_milestones=[90, 180, 270], warmup_epochs=5,
                cooldown_epochs=0, patience_epochs=10, decay_rate=0.1, min_lr=0.0, warmup_lr=1e-5,
                warmup_prefix=False, lr_noise=None, lr_cycle_mul=1.0, lr_cycle_decay=0.5, lr_cycle_limit=1,
                lr_k_decay=1.0, sched_on_updates=False, eval_metric='top1')
SPEC_KEYS = ['sched', 'epochs', 'warmup_epochs', 'min_lr', 'warmup_lr', 'cooldown_epochs', 'warmup_prefix',
             'sched_on_updates', 'lr_k_decay', 'lr_cycle_mul', 'lr_cycle_decay', 'lr_cycle_limit', 'decay_epochs',
             'decay_milestones', 'decay_rate', 'patience_epochs']

# A top-1 that rises, stalls and wobbles (plateau's input).
PLATEAU_TOP1 = [10, 20, 30, 35, 35, 35, 34, 36, 36.001, 36, 36, 36, 37, 37, 37, 37, 37, 37, 37, 37, 37, 37]


def case(name, updates, lr, **keys):
    return dict(name=name, updates=updates, lr=lr, keys=keys)


CASES = [
    case('cosine_updates_prefix_cooldown', 5, 1e-3, epochs=6, warmup_epochs=2, warmup_prefix=True,
         cooldown_epochs=2, sched_on_updates=True, min_lr=1e-5, warmup_lr=1e-6),
    case('cosine_epochs_k_decay', 3, 5e-4, epochs=20, warmup_epochs=3, cooldown_epochs=3, lr_k_decay=2.0,
         min_lr=1e-6, warmup_lr=1e-7),
    case('cosine_updates_cycle_mul', 3, 1e-3, epochs=5, warmup_epochs=1, warmup_prefix=True, lr_cycle_mul=2.0,
         lr_cycle_decay=0.5, lr_cycle_limit=3, sched_on_updates=True, min_lr=1e-6, warmup_lr=1e-6),
    case('cosine_epochs_two_cycles', 2, 2e-3, epochs=7, warmup_epochs=0, lr_cycle_limit=2, lr_cycle_decay=0.3,
         lr_k_decay=0.5, cooldown_epochs=1, min_lr=1e-5),
    case('step_epochs_prefix', 2, 1e-3, sched='step', epochs=12, decay_epochs=3, decay_rate=0.5, warmup_epochs=2,
         warmup_prefix=True, warmup_lr=1e-6),
    case('step_updates', 4, 1e-3, sched='step', epochs=8, decay_epochs=2.5, decay_rate=0.7, warmup_epochs=1,
         sched_on_updates=True, warmup_lr=1e-6),
    case('multistep_epochs', 2, 1e-3, sched='multistep', epochs=10, decay_milestones=[3, 7], decay_rate=0.2,
         warmup_epochs=2, warmup_lr=1e-6),
    case('multistep_updates_prefix', 3, 1e-3, sched='multistep', epochs=8, decay_milestones=[2, 5],
         decay_rate=0.5, warmup_epochs=1, warmup_prefix=True, sched_on_updates=True, warmup_lr=1e-6),
    case('plateau', 2, 1e-3, sched='plateau', epochs=22, warmup_epochs=2, patience_epochs=2, decay_rate=0.5,
         min_lr=1e-4, warmup_lr=1e-6),
    case('constant_warmup', 2, 1e-3, sched='constant', epochs=6, warmup_epochs=3, warmup_lr=1e-5),
]


def run(args, lr, updates):
    """The lr of every update of the run train.py trains with `args`, and the top-1s it fed the scheduler."""
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        scheduler, num_epochs = create_scheduler_v2(optimizer, **scheduler_kwargs(args),
                                                    updates_per_epoch=updates)
    lrs, top1s = [], []
    num_updates = 0
    for epoch in range(num_epochs):
        for _ in range(updates):
            lrs.append(optimizer.param_groups[0]['lr'])
            num_updates += 1
            scheduler.step_update(num_updates=num_updates, metric=0.0)
        top1 = float(PLATEAU_TOP1[epoch % len(PLATEAU_TOP1)])
        top1s.append(top1)
        scheduler.step(epoch + 1, top1)
    return num_epochs, lrs, top1s


def reference_lr(cfg):
    """train.py's lr from lr_base: scaled by the global batch over lr_base_size (sqrt for adaptive optimizers)."""
    if cfg.get('lr') is not None:
        return cfg['lr']
    ratio = cfg['batch_size'] * cfg.get('grad_accum_steps', 1) / cfg['lr_base_size']
    scale = cfg.get('lr_base_scale') or ('sqrt' if 'ada' in cfg['opt'].lower() else 'linear')
    return cfg['lr_base'] * (math.sqrt(ratio) if scale == 'sqrt' else ratio)


def emit(header, spec_line, num_epochs, lrs, top1s):
    print(header + f' trained_epochs={num_epochs}')
    print(spec_line)
    print('top1 ' + ' '.join(repr(t) for t in top1s))
    print('lrs ' + ' '.join(repr(v) for v in lrs))


def main():
    print(f'# timm {timm.__version__}, torch {torch.__version__}: tools/timm_sched_golden.py')
    with open(REFERENCE) as f:
        ref = yaml.safe_load(f)
    args = dict(TRAIN_PY)
    args.update({k: v for k, v in ref.items() if k in TRAIN_PY and v is not None})
    lr = reference_lr(ref)
    emit(f'case reference updates_per_epoch=2 lr={lr!r}', 'reference ' + REFERENCE,
         *run(types.SimpleNamespace(**args), lr, 2))
    for c in CASES:
        args = dict(TRAIN_PY)
        args.update(c['keys'])
        spec = {k: args[k] for k in SPEC_KEYS}
        emit(f'case {c["name"]} updates_per_epoch={c["updates"]} lr={c["lr"]!r}',
             'schedule ' + yaml.safe_dump(spec, default_flow_style=True, width=10000).strip(),
             *run(types.SimpleNamespace(**args), c['lr'], c['updates']))
    # nmsparse's warmup_cosine is timm's cosine over epochs - warmup_epochs, the warm-up prefixed, per update.
    args = dict(TRAIN_PY, epochs=8, warmup_epochs=2, warmup_prefix=True, sched_on_updates=True, min_lr=1e-6,
                warmup_lr=1e-6, cooldown_epochs=1)
    spec = dict(sched='warmup_cosine', epochs=10, warmup_epochs=2, min_lr=1e-6, warmup_lr=1e-6, cooldown_epochs=1)
    emit('case warmup_cosine updates_per_epoch=3 lr=0.001',
         'schedule ' + yaml.safe_dump(spec, default_flow_style=True, width=10000).strip(),
         *run(types.SimpleNamespace(**args), 1e-3, 3))


if __name__ == '__main__':
    sys.exit(main())
