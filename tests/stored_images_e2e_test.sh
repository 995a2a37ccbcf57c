#!/usr/bin/env bash
# Stored images end to end (issue 23): the real nmserver (loopback, SQLite file), one nmworker with one CPU
# slot and real nmtrain runs of the nano ViT on data the test makes (make_test_images: TurboJPEG's encoder):
#  - an ImageFolder of 3 classes x 24 JPEGs of 40x30 (6 per class in val), through timm's training transform
#    with the reference ViT config's data keys (tests/testdata/imagefolder_sweep.yaml), with and without
#    random erasing: `nmctl validate` prints the pipeline; both runs SUCCEED, every epoch line reports 0
#    decode failures in training and in evaluation, and `nmctl run` shows the counts;
#  - the same folder with one truncated JPEG in each split: past the default threshold (0.1% of an epoch)
#    the run FAILS with a data error naming the training file, after its epoch line counted both failures;
#  - 300 CIFAR-10 records in the binary distribution format (tests/testdata/cifar_sweep.yaml): SUCCEEDS.
#
# Usage: stored_images_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN FOLDER_YAML CIFAR_YAML MAKE_TEST_IMAGES
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
folder_yaml=$(realpath "$5"); cifar_yaml=$(realpath "$6"); make_images=$(realpath "$7")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/stored_images_e2e.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

"$make_images" imagefolder "$tmp/folder" 3 24 40 30
"$make_images" cifar10 "$tmp/cifar" 300 100
cp -r "$tmp/folder" "$tmp/bad_folder"
good="$tmp/folder/train/class_1/3.jpg"
head -c $(($(stat -c %s "$good") / 2)) "$good" >"$tmp/bad_folder/train/class_1/truncated.jpg"
head -c $(($(stat -c %s "$good") / 2)) "$good" >"$tmp/bad_folder/val/class_0/truncated_eval.jpg"
sed "s|DATA_ROOT|$tmp/folder|" "$folder_yaml" >"$tmp/folder.yaml"
sed -e "s|DATA_ROOT|$tmp/bad_folder|" -e "s|^name: imagefolder|name: bad-imagefolder|" \
  -e "s|^  data.re_prob: .*|  data.re_prob: [0.0]|" "$folder_yaml" >"$tmp/bad.yaml"
echo "max_retries: 0" >>"$tmp/bad.yaml"
sed "s|DATA_ROOT|$tmp/cifar|" "$cifar_yaml" >"$tmp/cifar.yaml"

start_server 0
start_worker w1 --data_root="$tmp"  # The test-made folders live beside the work dir.

# --- The pipeline as validate prints it
ctl validate "$tmp/folder.yaml" >"$tmp/validate.out" 2>&1
check "nmctl validate accepts the ImageFolder sweep" test $? = 0
log "validate:"; cat "$tmp/validate.out" >&2
for step in RandomResizedCrop RandAugment RandomErasing CenterCrop; do
  check "nmctl validate prints the pipeline's $step" grep -q "$step" "$tmp/validate.out"
done

# --- An ImageFolder through timm's transforms, with and without random erasing
sweep=$(ctl submit "$tmp/folder.yaml" --json | json "d['sweep']['id']")
check "submit returns a sweep id" test -n "$sweep"
check "both runs succeed" wait_runs "$sweep" "len(runs) == 2 and all(r['state']=='SUCCEEDED' for r in runs)" 240
for run in $(ctl runs --sweep "$sweep" --json | json "' '.join(str(r['id']) for r in d['runs'])"); do
  check "run $run: two epoch lines, each with 0 decode failures" test "$(ctl run "$run" --json |
    json "[p['values'].get('decode_failures') for p in d['metrics'] if p['kind']=='epoch']")" = "[0.0, 0.0]"
  check "run $run: and 0 in evaluation" test "$(ctl run "$run" --json |
    json "[p['values'].get('eval_decode_failures') for p in d['metrics'] if p['kind']=='epoch']")" = "[0.0, 0.0]"
  check "nmctl run $run shows the decode failures" bash -c "'$nmctl' run $run | grep -q ' decode_failures'"
  check "nmctl run $run shows the evaluation's" bash -c "'$nmctl' run $run | grep -q 'eval_decode_failures'"
done

# --- One truncated JPEG in 73: past the threshold, the run fails naming it
bad=$(ctl submit "$tmp/bad.yaml" --json | json "d['sweep']['id']")
check "the run on bad data fails" wait_runs "$bad" "all(r['state']=='FAILED' for r in runs)" 240
bad_run=$(ctl runs --sweep "$bad" --json | json "d['runs'][0]['id']")
ctl run "$bad_run" --json >"$tmp/bad.json"
log "bad data: $(json "d['run']['message']" <"$tmp/bad.json")"
check "as a data error naming the file" test "$(json \
  "'data error' in d['run']['message'] and 'truncated.jpg' in d['run']['message']" <"$tmp/bad.json")" = True
check "its epoch line counted the failure first" test "$(json \
  "[p['values'].get('decode_failures') for p in d['metrics'] if p['kind']=='epoch']" <"$tmp/bad.json")" = "[1.0]"
check "and the evaluation's" test "$(json \
  "[p['values'].get('eval_decode_failures') for p in d['metrics'] if p['kind']=='epoch']" <"$tmp/bad.json")" = "[1.0]"

# --- CIFAR-10's binary format
cifar=$(ctl submit "$tmp/cifar.yaml" --json | json "d['sweep']['id']")
check "the CIFAR-10 run succeeds" wait_runs "$cifar" "all(r['state']=='SUCCEEDED' for r in runs)" 240
finish
