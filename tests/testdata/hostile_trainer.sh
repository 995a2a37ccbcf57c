#!/usr/bin/env bash
# A stand-in for nmtrain, for the hostile-strings test (tests/hostile_strings_e2e_test.sh): as rank 0 it prints
# log lines (stdout and stderr) and metric lines whose metric names and label values carry hostile text:
# shell and gnuplot syntax that would touch a file in <work_dir>/canary if anything ran it, escape sequences,
# C0 and C1 controls, a right-to-left override, spreadsheet formulas, bytes that are not UTF-8, a 100 KB line.
# The run of seed 5 then fails (exit 4), so that its stderr becomes the run's message.
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
c="$(cd "$out/../.." && pwd)/canary"  # <work_dir>/canary: the test's canary directory.

printf '%s\n' "log \`touch $c/log_backquote\` \$(touch $c/log_dollar) ; touch $c/log_semi | touch $c/log_pipe & '\"‘’"
printf 'esc \033[2J\033]0;pwned\007 c0 \001 del \177 c1 \302\205\302\233 rlo \342\200\256 bad \377\376 cut \342\200\n'
printf 'carriage\rreturn\ttab\n'
printf '=HYPERLINK("http://x") +1+1 -2+3 @SUM(A1)\n' >&2
printf 'stderr esc \033[31m red \377 rlo \342\200\256\n' >&2
head -c 100000 /dev/zero | tr '\0' 'L'
printf '\n'
top1="0.$((RANDOM % 80 + 10))"
hostile='\"`touch '"$c"'/label_backquote`\" $(touch '"$c"'/label_dollar) \u001b[2J\u001b]0;t\u0007 \u0085 \u202e =1+1 \n fake row \t \\'
for step in 1 2 3; do
  printf '{"kind":"step","epoch":0,"step":%d,"loss":%s,"=cmd\\u001b[31m\\u202e":1.5}\n' "$step" "1.$step"
done
printf '{"kind":"epoch","epoch":0,"step":3,"top1":%s,"loss":0.9,"note\\u202e\\u001b[2J":"%s"}\n' "$top1" "$hostile"
printf '{"kind":"final","epoch":0,"step":3,"top1":%s,"@evil\\u202e":1,"device":"cpu","devices":"cpu","note":"%s"}\n' \
  "$top1" "$hostile"
if grep -q '^seed: 5$' "$spec"; then
  printf 'failing: \033[2J\nfake row\377\n' >&2
  exit 4
fi
