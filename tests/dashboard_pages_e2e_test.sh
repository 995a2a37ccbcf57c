#!/usr/bin/env bash
# The dashboard's sweep table and run page in a real browser (issue 40), end to end: the real nmserver (with
# its dashboard) and nmworker on loopback, a stand-in trainer (tests/testdata/curves_trainer.sh) that streams
# what a sparse run does (step lines with loss, lr, D and sparsity per location, epoch and final lines) and
# fails one run's first attempt so that it resumes. Headless Chromium, driven over the DevTools protocol
# (tests/cdp_page.py), clicks the table's headers and reads the page:
# - one column per final metric, sorted as numbers (9.5 before 10.25), runs without it last both ways, the
#   cells in nmctl's number format (7.63G), a metric name that is markup shown as text;
# - the sort in the URL, rendered so by the server on a reload;
# - the resumed run's page: curves of loss, lr, D and sparsity per attempt with a mark where attempt 2
#   began, its final metrics, its state history and its config, user text as text.
#
# Usage: dashboard_pages_e2e_test.sh NMSERVER NMWORKER NMCTL CURVES_TRAINER
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); trainer=$(realpath "$4")
tests_dir=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/dashboard_pages.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
export HOME="$tmp/home"
mkdir -p "$HOME"

source "$tests_dir/e2e_lib.sh"
export PYTHONDONTWRITEBYTECODE=1  # No __pycache__ beside cdp_page.py.

chromium=$(command -v chromium-headless-shell || command -v chromium || true)
[[ -n "$chromium" ]] || { echo "no headless Chromium (tools/bootstrap.sh)"; exit 1; }

python3 - "$tmp/sweep.yaml" <<'PY'
import json, sys
base = {'name': 'curves <script>alert(1)</script>', 'seed': 0, 'model': {'name': 'vit_nano_patch7_28'},
        'data': {'dataset': 'fashion_mnist', 'train_subset': 500, 'eval_subset': 200, 'batch_size': 50},
        'optimizer': {'name': 'adamw', 'lr': 0.002}, 'schedule': {'epochs': 2},
        'resources': {'gpus': 1, 'cpu_threads': 1}, 'sparsity': {'sparsity_loc': 'FF'}}
# Seeds only: a replicate axis, so the sweep page draws no parallel coordinates (WebGL, which software
# rendering on a loaded machine draws for minutes while the page answers nothing).
grid = {'variant': {label: {'seed': i} for i, label in enumerate(['a', 'b <img src=x onerror=alert(1)>', 'c', 'd'])}}
open(sys.argv[1], 'w').write(json.dumps({'name': 'curves', 'base': base, 'grid': grid, 'max_retries': 1}))
PY

start_server 0 --http_listen=127.0.0.1:0
http=$(sed -n 's|^nmserver dashboard on \(http://[^ ]*/\) .*|\1|p' "$tmp/nmserver-1.log")
check "nmserver prints the dashboard's address" test -n "$http"
"$nmworker" --coordinator="$NMSPARSE_COORDINATOR" --work_dir="$work" --trainer="$trainer" --cpu-slots=2 \
  --host=w1 >"$tmp/nmworker-w1.log" 2>&1 &
worker_pid[w1]=$!

ctl submit "$tmp/sweep.yaml" >"$tmp/submit.txt" 2>&1
check "nmctl submit takes the sweep" test $? -eq 0
sweep=$(ctl sweeps --json | json "d['sweeps'][0]['id']")
check "its 4 runs succeed" wait_runs "$sweep" "len(runs)==4 and all(r['state']=='SUCCEEDED' for r in runs)" 120
resumed=$(ctl runs --sweep "$sweep" --json | json "[r['id'] for r in d['runs'] if r['labels']['variant']=='a'][0]")
check "run $resumed took two attempts" test "$(ctl run "$resumed" --json | json "d['run']['attempt']")" -eq 2

check "the sweep table and the run page in Chromium" \
  python3 - "$tests_dir" "$chromium" "$tmp/chromium" "$http" "$sweep" "$resumed" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from cdp_page import Page
chromium, profile, http, sweep, resumed = sys.argv[2:7]
failures = []
def expect(name, got, want):
    if got != want:
        failures.append(f'{name}: got {got!r}, want {want!r}')
    else:
        print(f'ok: {name}', file=sys.stderr)

HOSTILE = '<img src=x onerror=alert(1)>'
HEADERS = '[...document.querySelectorAll("#runs thead th")].map(t => t.textContent)'
def column(name):  # The cells of a column by its header's text (the sorted one carries an arrow).
    return (f'(() => {{ const i = {HEADERS}.findIndex(t => t.split(" ")[0] === {name!r}); '
            'return [...document.querySelectorAll("#runs tbody tr")].map(r => r.cells[i].textContent); })()')
def sorted_by(name, order):
    return f'document.querySelector(\'#runs a[data-sort="{name}"]\').parentElement.getAttribute("aria-sort") === "{order}"'

# Each drawn chart whose legend's box meets its axis titles' or its title's (issue 40: "epoch" and "step" sat
# under the legends).
OVERLAPS = '''[...document.querySelectorAll(".js-plotly-plot")].map(el => {
  const box = s => { const e = el.querySelector(s); const r = e && e.getBoundingClientRect(); return r && r.width ? r : null; };
  const hit = (a, b) => !!(a && b && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom);
  return [el.id, ['.g-xtitle', '.g-ytitle', '.gtitle'].filter(s => hit(box('.legend'), box(s)))];
}).filter(([id, hits]) => hits.length)'''

with Page(chromium, profile) as page:
    page.open(f'{http}sweeps/{sweep}')
    expect('one column per final metric, the markup name as text', page.eval(HEADERS),
           ['run \u25b2', 'labels', 'state', 'try', HOSTILE, 'flops', 'top1'])
    expect('no element came of a name', page.eval('document.querySelectorAll("#runs img, #runs script").length'), 0)
    page.eval('document.querySelector(\'#runs a[data-sort="top1"]\').click()')
    page.wait(sorted_by('top1', 'ascending'))
    expect('a click sorts by top1 as numbers, the run without it last', page.eval(column('top1')),
           ['9.5', '10.25', '80', '-'])
    expect('cells in nmctl\'s number format', page.eval(column('flops')), ['7.63G', '7.63G', '1000', '1000'])
    expect('the sort is in the URL', page.eval('location.search'), '?sort=top1')
    page.eval('document.querySelector(\'#runs a[data-sort="top1"]\').click()')
    page.wait(sorted_by('top1', 'descending'))
    expect('a second click sorts descending, the run without it still last', page.eval(column('top1')),
           ['80', '10.25', '9.5', '-'])
    page.open(page.eval('location.href'))  # A reload: the server renders the same order.
    expect('the server renders the URL\'s sort', [page.eval(column('top1')), page.eval(sorted_by('top1', 'descending'))],
           [['80', '10.25', '9.5', '-'], True])

    page.wait('document.querySelectorAll("#figures .js-plotly-plot").length >= 2')
    expect('no legend over a title on the sweep page', page.eval(OVERLAPS), [])

    page.open(f'{http}runs/{resumed}')
    charts = ['loss', 'lr', 'd', 'sparsity']
    page.wait(' && '.join(f'document.getElementById("chart-{c}").dataset.points > 0' for c in charts + ['eval']))
    traces = lambda c: page.eval(f'document.getElementById("chart-{c}").data.map(t => [t.name, t.x])')
    attempt1, attempt2 = [1, 2, 3, 4, 5, 6], [5, 6, 7, 8, 9, 10]
    for c in ['loss', 'lr', 'd']:
        expect(f'{c}: a curve per attempt over steps', traces(c),
               [[f'run {resumed} \u00b7 attempt 1', attempt1], [f'run {resumed} \u00b7 attempt 2', attempt2]])
    expect('sparsity: a curve per location and attempt', traces('sparsity'),
           [['ff \u00b7 attempt 1', attempt1], ['ff \u00b7 attempt 2', attempt2],
            ['qkv \u00b7 attempt 1', attempt1], ['qkv \u00b7 attempt 2', attempt2]])
    expect('D falls as the trainer said', [round(y, 6) for y in page.eval('document.getElementById("chart-d").data[1].y')],
           [0.5, 0.4, 0.3, 0.2, 0.1, 0])
    for c in charts:
        expect(f'{c}: a mark where attempt 2 resumed', page.eval(
            f'(el => [el.layout.shapes.map(s => s.x0), el.layout.annotations.map(a => a.text)])'
            f'(document.getElementById("chart-{c}"))'), [[5], ['attempt 2 (resumed)']])
    expect('eval: top1 per epoch', traces('eval'), [[f'run {resumed} \u00b7 attempt 2', [1, 2]]])
    expect('no legend over a title on the run page', page.eval(OVERLAPS), [])
    expect('the final metrics as a table', page.eval(
        '[...document.querySelectorAll("#finals tbody tr")].map(r => [...r.cells].map(c => c.textContent))'),
        [['flops', '7.63G'], ['top1', '10.25']])
    history = page.eval('[...document.querySelectorAll("#history tbody tr")].map(r => [...r.cells].map(c => c.textContent))')
    expect('the state history: attempt 1 failed and was requeued, attempt 2 succeeded',
           [[h[0], h[1]] for h in history if h[1] in ('QUEUED', 'SUCCEEDED')], [['0', 'QUEUED'], ['1', 'QUEUED'], ['2', 'SUCCEEDED']])
    expect('the failure is the reason of the requeue', 'exit 4' in history[3][3] or 'training error' in history[3][3], True)
    config = page.eval('document.getElementById("config").textContent')
    expect('the config is the run\'s spec, as text', ['seed: 0' in config, 'curves <script>alert(1)</script>' in config,
                                                        page.eval('document.getElementById("config").children.length')],
           [True, True, 0])
    expect('the pages threw nothing', page.console, [])
sys.exit('\n'.join(failures) if failures else 0)
PY

finish
