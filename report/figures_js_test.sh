#!/usr/bin/env bash
# report/web/figures.js in a real browser (headless Chromium, Debian's plotly.js), on a page of test figures:
# hover numbers in nmctl's format (common/metric_text_test.cc's cases), a cross at the last point of a run
# that early stopping ended (on its curve and on a series of points per run), the filter box, selection by a
# click on a run's point, by parallel coordinates' run chooser and by a brush on their objective axis, the
# selected run's line there, a one-point curve drawn as a marker, a categorical slice's axis named by its
# categories, hostile names shown as text, and (issue 40) a configuration's band over seeds in its recipe's
# colour with its runs hidden behind one legend entry, and a discrete parallel axis ticked at its values.
#
# Usage: figures_js_test.sh FIGURES_JS PAGE_HTML
set -uo pipefail
figures_js=$(realpath "$1"); page=$(realpath "$2")
plotly=/usr/share/python3-plotly/plotly.js
chromium=$(command -v chromium-headless-shell || command -v chromium || true)
[[ -n "$chromium" ]] || { echo "no headless Chromium (tools/bootstrap.sh)"; exit 1; }
[[ -s "$plotly" ]] || { echo "no $plotly (Debian python3-plotly)"; exit 1; }
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/figures_js.XXXXXX")
export HOME="$tmp/home"
mkdir -p "$HOME"
cp "$plotly" "$figures_js" "$page" "$tmp/"
"$chromium" --headless --no-sandbox --disable-gpu --virtual-time-budget=8000 --user-data-dir="$tmp/chromium" \
  --dump-dom "file://$tmp/$(basename "$page")" >"$tmp/dom.html" 2>"$tmp/chromium.log"
python3 - "$tmp/dom.html" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1], encoding='utf-8').read()
m = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
assert m, 'the page wrote no result:\n' + dom[-2000:]
r = json.loads(html.unescape(m.group(1)))
failures = []
if 'error' in r: failures.append('the page threw: ' + r['error'])
def expect(name, got, want):
    if got != want: failures.append(f'{name}: got {got!r}, want {want!r}')
expect('numbers in nmctl format', r.get('format'),
       '81.53|0.7534|0.0005|100|12346|42.9G|123k|1M|-2.5M|150E|1.5e+22|1.234e-05|0|nan|-')
expect('a stopped run gets its cross', r.get('stopped'), True)
expect('the cross is at the last point of the stopped run', r.get('stopped_at'), [3, 0.3])
expect('a one-point curve is a marker', r.get('one_point_mode'), 'markers')
expect('the filter keeps run 2 only (one point)', r.get('filtered_points'), '1')
expect('a click selects the run', r.get('selected'), 'run 1 <b>x</b>')
expect('the selected run is highlighted', r.get('selected_width'), 4)
expect('hover text names the run literally', r.get('hover', '').startswith('run 1 &lt;b&gt;x&lt;/b&gt;<br>epoch: 1<br>'), True)
expect('no bold from a name', r.get('bold'), 0)
expect('a stopped run gets its cross on a series of points', r.get('points_stopped_at'), [[[1e9], [0.3], [1]]])
expect('parallel coordinates: the selected run is red and drawn last', r.get('parallel_selected'),
       [[0, 0, 1], [0.15, 0.5, 0.3], '1'])
expect('the run chooser lists the runs with their objective', r.get('chooser_options'),
       ['none', 'run 1 <b>x</b>: 0.3', 'run 2: 0.15', 'run 3: 0.5'])
expect('the run chooser selects a run everywhere', r.get('chosen'), ['run 3', [0, 0, 1], [0.3, 0.15, 0.5], 2])
expect('a brush keeping one run selects it (and stays)', r.get('brushed'), ['run 2', '2', [0.1, 0.2]])
expect('a categorical slice names its categories on the axis', r.get('slice_ticks'),
       [[0, 1], ['dense', 'srste &lt;b&gt;'], ['dense', 'srste <b>']])
expect('a categorical slice names the category in the hover', r.get('slice_hover'), 'recipe: srste &lt;b&gt;')
expect('a discrete parallel axis is ticked at its values', r.get('parallel_ticks'),
       [[-4, -3, -2], ['0.0001', '0.001', '0.01']])
expect('a band is a fill and a mean line; its runs hidden behind one legend entry', r.get('bands'),
       {'count': 6, 'fill': ['toself', [0.75, 0.875, 0.625, 0.25], False],
        'colors': ['#1f77b4', '#ff7f0e', '#1f77b4', '#1f77b4'], 'visible': ['legendonly', 'legendonly'],
        'legend': [['recipe=srste: each run', True], ['recipe=srste: each run', False]]})
if failures:
    sys.exit('\n'.join(failures))
print('figures.js: ok')
PY
