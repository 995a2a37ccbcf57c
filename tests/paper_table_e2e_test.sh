#!/usr/bin/env bash
# The paper's table end to end (issue 40): the real nmserver (loopback, SQLite file), one nmworker with one CPU
# slot and real nmtrain runs of the nano ViT on synthetic images, over tests/testdata/paper_table_sweep.yaml
# (recipe x m_sparsity x seed).
#  - Dense trains once per seed: its runs in the 2:8 column reuse the 2:4 column's (same content hash).
#  - `nmctl compare` prints top-1 in percent with one decimal, mean ± std (n=2) over the pooled seeds, columns
#    headed 2:4 and 2:8, and a title that says "pooled over seed"; `--pool seed` is accepted.
#  - `--delta dense` adds paired differences (n=2: one per seed); `--epoch best`, and the Markdown, LaTeX and
#    CSV formats print the same numbers.
#  - `nmctl report` shows the same table, and draws seeds as replicates: one mean ± std band per configuration
#    over its seeds (the runs hidden behind it), no seed in parallel coordinates or importance.
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

# Seeds as replicates in the figures (issue 40, item 2): from the report's figure data (index.html's
# nm-figures JSON) and its SVGs, on these real runs.
figures_json() {  # figures_json PYTHON_EXPRESSION over figs (id -> figure): exits 0 when it is true.
  python3 - "$tmp/report/index.html" "$1" <<'PY'
import html, json, re, sys
page = open(sys.argv[1], encoding='utf-8').read()
m = re.search(r'<script id="nm-figures" type="application/json">(.*?)</script>', page, re.S)
figs = {f['id']: f for f in json.loads(m.group(1))['figures']}
ok = eval(sys.argv[2])
if not ok:
    print(json.dumps({k: figs.get(k) for k in ('curves_top1', 'search_parallel_top1', 'search_importance_top1')})[:4000], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
bands="[s for s in figs['curves_top1']['series'] if s['style'] == 'band']"
hidden="[s for s in figs['curves_top1']['series'] if s['hidden']]"
# Dense's 2:8 runs reuse the 2:4 ones' results and have no curve of their own: 3 configurations have curves.
check "the top-1 curves are one band per trained configuration (recipe x N:M), each over its 2 seeds" \
  figures_json "len($bands) == 3 and all(s['name'].endswith('(2 runs)') and 'seed' not in s['name'] for s in $bands)"
check "the 6 trained runs' own lines are hidden behind their bands, one legend entry per band" \
  figures_json "len($hidden) == 6 and len({s['legend_group'] for s in $hidden}) == 3"
check "a band's mean and sample std at the last epoch are those of its two runs' last points" figures_json "all(
  abs(b['y'][-1] - sum(r['y'][-1] for r in rs) / 2) < 1e-12 and
  abs(b['err'][-1] - abs(rs[0]['y'][-1] - rs[1]['y'][-1]) / 2 ** 0.5) < 1e-12
  for b in $bands for rs in [[r for r in $hidden if r['legend_group'] == b['name'] + ': each run']] if len(rs) == 2)"
check "a band takes its recipe's colour group" \
  figures_json "sorted({s['group'] for s in $bands}) == ['DENSE', 'SRSTE']"
check "the curves' SVG draws the bands, not the runs" \
  bash -c "grep -q '(2 runs)</title>' '$tmp/report/curves_top1.svg' && ! grep -q '<title>run [0-9]' '$tmp/report/curves_top1.svg'"
dims="[d['label'] for d in figs['search_parallel_top1']['dimensions']]"
check "parallel coordinates: no seed axis, one line per configuration, its std over seed and mean" \
  figures_json "$dims == ['recipe', 'sparsity.m_sparsity', 'top1 std over seed', 'mean final top1'] and len(figs['search_parallel_top1']['run_ids']) == 4"
check "parallel coordinates: m_sparsity is ticked at 4 and 8 only" \
  figures_json "figs['search_parallel_top1']['dimensions'][1]['ticks'] == [4, 8]"
check "importance ranks recipe and m_sparsity, never the seed" \
  figures_json "sorted(figs['search_importance_top1']['series'][0]['categories']) == ['recipe', 'sparsity.m_sparsity']"
check "top-1 vs density is drawn (two densities), top-1 vs parameters is not (one model size)" \
  bash -c "test -s '$tmp/report/top1_vs_density.svg' && test ! -e '$tmp/report/top1_vs_params.svg'"

exit $((failures > 0))
