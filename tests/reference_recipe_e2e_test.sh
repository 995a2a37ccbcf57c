#!/usr/bin/env bash
# The paper's ViT recipe end to end (issue 24): the reference config itself (vit_base_training.yaml, flat timm
# train.py keys; nmctl submits a flat file as a one-run sweep and --set takes the structured key paths),
# scaled down with --set: a nano ViT at 32x32 with patch 8, two epochs (one of warm-up) plus one cooldown epoch,
# the data path replaced by a test-made ImageFolder of 3 classes x 24 JPEGs (make_test_images), and the model
# EMA turned on. The recipe is otherwise the config's: BCE loss, Mixup (0.5) switching with nothing (cutmix 0),
# RandAugment, warm-up cosine, AdamW, MDGF 1:32 (Q/K/V 1:8), bf16 autocast. Through the real nmserver, one
# nmworker and nmtrain the run SUCCEEDS; `nmctl run` shows the loss and the EMA's top-1 for every epoch, and the
# spec it ran with has the BCE loss and the EMA.
#
# Usage: reference_recipe_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN REFERENCE_YAML MAKE_TEST_IMAGES
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
reference=$(realpath "$5"); make_images=$(realpath "$6")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/reference_recipe_e2e.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

"$make_images" imagefolder "$tmp/folder" 3 24 40 30
sets=(--set data.path="$tmp/folder" --set data.batch_size=24 --set data.workers=1
  --set model.name=vit_nano_patch7_28 --set model.in_chans=3 --set model.num_classes=3
  --set model.img_size=32 --set model.patch_size=8 --set model.ema=true
  --set schedule.epochs=2 --set schedule.cooldown_epochs=1 --set schedule.warmup_epochs=1
  --set resources.gpus=1 --set resources.cpu_threads=1)

start_server 0
start_worker w1 --data_root="$tmp/folder"

sweep=$(ctl submit "$reference" "${sets[@]}" --json | json "d['sweep']['id']")
check "the reference config, scaled down, is submitted" test -n "$sweep"
wait_runs "$sweep" "len(runs) == 1 and runs[0]['state'] in ('SUCCEEDED', 'FAILED', 'CANCELLED')" 240
run=$(ctl runs --sweep "$sweep" --json | json "d['runs'][0]['id']")
check "its run succeeds" test "$(ctl runs --sweep "$sweep" --json | json "d['runs'][0]['state']")" = SUCCEEDED
ctl run "$run" >"$tmp/run.out" 2>&1
ctl run "$run" --json >"$tmp/run.json"
log "nmctl run $run:"; cat "$tmp/run.out" >&2

check "the spec it ran with has the BCE loss" grep -q "bce_loss: true" "$tmp/run.out"
check "and the model EMA" grep -Eq "^  ema: true" "$tmp/run.out"
check "three epoch lines (epochs + cooldown_epochs), each with the loss and the EMA's top-1" test "$(json \
  "[sorted(k for k in ('loss', 'ema_top1') if k in p['values']) for p in d['metrics'] if p['kind']=='epoch']" \
  <"$tmp/run.json")" = \
  "[['ema_top1', 'loss'], ['ema_top1', 'loss'], ['ema_top1', 'loss']]"
check "the final line has the EMA's top-1 beside the raw one" test "$(json \
  "[('top1' in p['values'], 'ema_top1' in p['values']) for p in d['metrics'] if p['kind']=='final']" \
  <"$tmp/run.json")" = "[(True, True)]"
# Near chance on 3 classes, BCE (the mean over the classes of each logit's binary loss) reads about ln 2 = 0.69,
# where the soft-target cross-entropy would read about ln 3 = 1.10 (as eval_loss, a cross-entropy, does).
check "the training loss is the BCE's (< 0.9, not cross-entropy's ~1.1)" test "$(json \
  "all(p['values']['loss'] < 0.9 for p in d['metrics'] if p['kind']=='epoch')" <"$tmp/run.json")" = True
header=$(grep -E "^kind +epoch" "$tmp/run.out")
check "nmctl run's metric table has the loss and ema_top1 columns" \
  bash -c "grep -qw loss <<<'$header' && grep -qw ema_top1 <<<'$header'"
finish
