"""Prints timm's layer-wise learning-rate decay groups: the golden file
worker/trainer/testdata/timm_layer_decay.txt, which layer_decay_test compares with nmsparse's
worker/trainer/optim/optimizer.h (issue 24). For each model, create_optimizer_v2(model, 'adamw', layer_decay=...)
as train.py calls it: each parameter's group (in timm's order), lr_scale and weight decay (timm's Scheduler
then sets each group's rate to the base rate times lr_scale). Run by tools/check_timm_goldens.sh.
"""
import timm
from timm.optim import create_optimizer_v2

LAYER_DECAY = 0.75
WEIGHT_DECAY = 0.05
BASE_LR = 0.002

print("# model NAME GROUPS; then param NAME GROUP LR_SCALE WEIGHT_DECAY in named_parameters order")
for name in ["vit_tiny_patch16_224", "swinv2_tiny_window8_256"]:
    model = timm.create_model(name)
    optimizer = create_optimizer_v2(model, "adamw", lr=BASE_LR, weight_decay=WEIGHT_DECAY,
                                    layer_decay=LAYER_DECAY)
    group_of = {}
    for g, group in enumerate(optimizer.param_groups):
        for p in group["params"]:
            group_of[id(p)] = g
    print("model %s %d" % (name, len(optimizer.param_groups)))
    for pname, p in model.named_parameters():
        group = optimizer.param_groups[group_of[id(p)]]
        print("param %s %d %.17g %.17g" % (pname, group_of[id(p)], group["lr_scale"], group["weight_decay"]))
