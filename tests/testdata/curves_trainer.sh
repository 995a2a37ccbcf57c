#!/usr/bin/env bash
# A stand-in for nmtrain, for tests/dashboard_pages_e2e_test.sh: as rank 0 it prints the metric lines a
# sparse run streams (contract/metric_names.h): step lines with loss, lr, d and sparsity/<location>, epoch
# lines with top1, and a final line, its values chosen by the spec's seed so that the test knows each run's:
#   seed 0: final top1 10.25, flops 7.63e9; its first attempt fails after 6 steps (exit 4, retried), and
#           the second resumes at step 5 (a file in the run directory says an attempt ran before);
#   seed 1: final top1 9.5 (before 10.25 as a number, after it as text);
#   seed 2: no final top1 (a final line with flops only);
#   seed 3: final top1 80, and a final metric whose name is markup.
out="" spec=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --out) out=${args[i + 1]} ;;
    --spec) spec=${args[i + 1]} ;;
  esac
done
mkdir -p "$out"
[[ "$RANK" == 0 ]] || exit 0
seed=$(sed -n 's/^seed: *//p' "$spec" | head -n 1)
step_line() {  # step_line EPOCH STEP
  local s=$2
  printf '{"kind":"step","epoch":%d,"step":%d,"loss":%s,"lr":%s,"d":%s,"sparsity/ff":0.5,"sparsity/qkv":%s}\n' \
    "$1" "$s" "$(awk "BEGIN{print 2.5 - $s * 0.1}")" "$(awk "BEGIN{print 0.001 * (1 - $s / 20)}")" \
    "$(awk "BEGIN{print 1 - $s / 10}")" "$(awk "BEGIN{print 0.25 + $s / 40}")"
}
first=1
if [[ "$seed" == 0 && ! -e "$out/attempted" ]]; then
  touch "$out/attempted"
  for s in 1 2 3 4 5 6; do step_line 0 "$s"; done
  echo "attempt 1 fails after step 6" >&2
  exit 4
fi
[[ "$seed" == 0 ]] && first=5  # Resumed from the checkpoint of step 4.
for ((s = first; s <= 10; s++)); do
  step_line $((s > 5 ? 1 : 0)) "$s"
  if ((s == 5 || s == 10)); then
    printf '{"kind":"epoch","epoch":%d,"step":%d,"top1":%s,"loss":1.5}\n' $((s / 5 - 1)) "$s" "$((s * 4)).5"
  fi
done
case "$seed" in
  0) printf '{"kind":"final","epoch":1,"step":10,"top1":10.25,"flops":7630000000}\n' ;;
  1) printf '{"kind":"final","epoch":1,"step":10,"top1":9.5,"flops":7630000000}\n' ;;
  2) printf '{"kind":"final","epoch":1,"step":10,"flops":1000}\n' ;;
  *) printf '{"kind":"final","epoch":1,"step":10,"top1":80,"flops":1000,"<img src=x onerror=alert(1)>":1}\n' ;;
esac
