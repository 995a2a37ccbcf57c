#!/usr/bin/env bash
# report/web/figures.js in a real browser (headless Chromium, Debian's plotly.js), on a page of test figures:
# hover numbers in nmctl's format (common/metric_text_test.cc's cases), a cross at the last point of a run
# that early stopping ended, the filter box, selection by a click on a run's point, a one-point curve drawn
# as a marker, and hostile names shown as text.
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
def expect(name, got, want):
    if got != want: failures.append(f'{name}: got {got!r}, want {want!r}')
expect('numbers in nmctl format', r['format'],
       '81.53|0.7534|0.0005|100|12346|42.9G|123k|1M|-2.5M|150E|1.5e+22|1.234e-05|0|nan|-')
expect('a stopped run gets its cross', r['stopped'], True)
expect('the cross is at the last point of the stopped run', r['stopped_at'], [3, 0.3])
expect('a one-point curve is a marker', r['one_point_mode'], 'markers')
expect('the filter keeps run 2 only (one point)', r['filtered_points'], '1')
expect('a click selects the run', r['selected'], 'run 1 <b>x</b>')
expect('the selected run is highlighted', r['selected_width'], 4)
expect('hover text names the run literally', r['hover'].startswith('run 1 &lt;b&gt;x&lt;/b&gt;<br>epoch: 1<br>'), True)
expect('no bold from a name', r['bold'], 0)
if failures:
    sys.exit('\n'.join(failures))
print('figures.js: ok')
PY
