#!/usr/bin/env bash
# The paper's table end to end (issue 40): the real nmserver (loopback, SQLite file), one nmworker with one CPU
# slot and real nmtrain runs of the nano ViT on synthetic images, over tests/testdata/paper_table_sweep.yaml
# (recipe x m_sparsity x seed).
#  - Dense trains once per seed: its runs in the 2:8 column reuse the 2:4 column's (same content hash).
#  - `nmctl compare` prints top-1 in percent with one decimal, mean ± std (n=2) over the pooled seeds, columns
#    headed 2:4 and 2:8, and a title that says "pooled over seed"; `--pool seed` is accepted.
#  - `--delta dense` adds paired differences (n=2: one per seed); `--epoch best`, and the Markdown, LaTeX and
#    CSV formats print the same numbers.
#  - `nmctl report` shows the same table.
#
# Usage: paper_table_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN SWEEP_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
sweep_yaml=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/paper_table_e2e.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

start_server 0
start_worker w1

sweep=$(ctl submit "$sweep_yaml" --json | json "d['sweep']['id']")
check "submit returns a sweep id" test -n "$sweep"
check "the eight runs succeed" wait_runs "$sweep" "len(runs) == 8 and all(r['state']=='SUCCEEDED' for r in runs)" 600
ctl runs --sweep "$sweep" --json >"$tmp/runs.json"
dense="[r for r in d['runs'] if r['labels']['recipe']=='dense']"
check "dense trained twice (once per seed), not four times" \
  test "$(json "sum(1 for r in $dense if not r.get('reused_from'))" <"$tmp/runs.json")" = 2
check "the other two dense runs reuse those" \
  test "$(json "sorted(r['labels']['sparsity.m_sparsity'] for r in $dense if r.get('reused_from'))" <"$tmp/runs.json")" = "['8', '8']"

ctl compare "$sweep" >"$tmp/compare.txt"
check "nmctl compare exits 0" test $? = 0
log "compare:"; cat "$tmp/compare.txt" >&2
check "the title says the metric is the deployable top-1 in percent and the seeds are pooled" \
  grep -q "^sweep $sweep paper-table: final deploy_top1 (%) by recipe x N:M, pooled over seed$" "$tmp/compare.txt"
check "a line under the table says which top-1 is which" \
  grep -q "^deploy_top1: the deployable model, as nmtrain --export writes it" "$tmp/compare.txt"
check "the columns are headed by N:M" grep -Eq "^recipe +2:4 +2:8$" "$tmp/compare.txt"
cell='[0-9]+\.[0-9] ± [0-9]+\.[0-9] \(n=2\)'
for recipe in dense srste; do
  check "the $recipe row is percent mean ± std (n=2) in both columns" grep -Eq "^$recipe +$cell +$cell$" "$tmp/compare.txt"
done
check "dense is the same model in both columns" \
  bash -c "grep '^dense' '$tmp/compare.txt' | grep -Eo '$cell' | uniq | wc -l | grep -qx 1"
check "--pool seed is accepted and changes nothing" bash -c "'$nmctl' compare $sweep --pool seed | diff - '$tmp/compare.txt'"

ctl compare "$sweep" --metric top1 >"$tmp/raw.txt"
check "--metric top1: the trained weights' top-1 with the deployable one beside it" \
  grep -Eq "^recipe +2:4 +2:4 deployable +2:8 +2:8 deployable$" "$tmp/raw.txt"

ctl compare "$sweep" --delta dense >"$tmp/delta.txt"
log "compare --delta dense:"; cat "$tmp/delta.txt" >&2
check "--delta dense: a paired column beside each" grep -Eq "^recipe +2:4 +2:4 Δ vs dense +2:8 +2:8 Δ vs dense$" "$tmp/delta.txt"
check "--delta dense: srste's differences pair its two seeds" \
  grep -Eq "^srste +$cell +[-+]?[0-9]+\.[0-9] ± [0-9]+\.[0-9] \(n=2\)" "$tmp/delta.txt"

ctl compare "$sweep" --epoch best >"$tmp/best.txt"
check "--epoch best: the best-epoch table" grep -q "best-epoch top1 (%)" "$tmp/best.txt"
ctl compare "$sweep" --format markdown >"$tmp/compare.md"
check "--format markdown: a GFM table" grep -q "^| recipe | 2:4 | 2:8 |$" "$tmp/compare.md"
ctl compare "$sweep" --format latex >"$tmp/compare.tex"
check "--format latex: a booktabs tabular with ± in math" \
  bash -c "grep -q '^\\\\begin{tabular}{lrr}$' '$tmp/compare.tex' && grep -q '\\$\\\\pm\\$' '$tmp/compare.tex'"
ctl compare "$sweep" --format csv >"$tmp/compare.csv"
check "--format csv: a line per cell" test "$(grep -c ',deploy_top1,%,' "$tmp/compare.csv")" = 4
ctl compare "$sweep" --format html >/dev/null 2>"$tmp/format.err"
check "an unknown format is a usage error (exit 2)" test $? = 2
check "the error names the format and the choices" grep -q "'html' is not a table format (text, markdown, latex, csv)" "$tmp/format.err"

check "nmctl report writes the report" ctl report "$sweep" -o "$tmp/report"
first_cell=$(grep '^dense' "$tmp/compare.txt" | grep -Eo "$cell" | head -1)
check "the report shows compare's cells" grep -qF "<td>dense</td><td>$first_cell</td>" "$tmp/report/index.html"
check "the report's table says N:M and pooled over seed" \
  grep -q "top1 (%) by recipe &times; N:M, pooled over seed" "$tmp/report/index.html"

exit $((failures > 0))
