#!/usr/bin/env bash
# The report, the TensorBoard export and the dashboard end to end (docs/dashboard.md): the real nmserver (with
# --http_listen), nmworker and nmtrain on loopback with a real SQLite file run a 4-run sweep of the micro ViT
# on a Fashion-MNIST subset; then
# - `nmctl report` writes index.html referencing every figure, and each figure is an SVG with its series
#   (the runs, the recipes, the Pareto front); with --pdf a PDF of each; a real headless Chromium draws the
#   report's interactive figures (figures.js with plotly.js, copied beside index.html);
# - `nmctl export --format tensorboard` writes one event file per run whose records and CRCs read back
#   (and, when a venv with the tensorboard package exists, TensorBoard's own reader loads the scalars);
# - the dashboard's pages and JSON answer, stalled HTTP clients do not hold up the gRPC API, and a real
#   headless Chromium renders the sweep page (plotly charts and runs in the DOM), the run page (plotly charts
#   with points) and takes a non-blank screenshot;
# - with tokens in the database: no token gets 401, a user token 200 (header, or the /login cookie), a
#   worker token 403, and no token appears in the server's log.
# Set NMSPARSE_REPORT_ARTEFACTS=DIR to keep the report and the screenshots there (docs/images/, see
# docs/dashboard.md): then a small TPE search (SEARCH_YAML) runs too, for a screenshot of its search views.
#
# Usage: report_dashboard_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN SWEEP_YAML SEARCH_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
sweep_yaml=$(realpath "$5"); search_yaml=$(realpath "$6")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/report.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
export HOME="$tmp/home"  # Chromium writes its profile there.
mkdir -p "$HOME"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

chromium=$(command -v chromium-headless-shell || command -v chromium || true)
browser() {  # browser ARGS... URL: headless Chromium, quiet.
  "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=6000 \
    --user-data-dir="$tmp/chromium" "$@" 2>>"$tmp/chromium.log"
}
http_code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

# A PNG that decodes (zlib) to more than a handful of distinct byte values: not a blank page.
png_not_blank() {
  python3 - "$1" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
at, idat = 8, b''
while at < len(data):
    length, kind = struct.unpack('>I4s', data[at:at + 8])
    if kind == b'IDAT':
        idat += data[at + 8:at + 8 + length]
    at += 12 + length
pixels = zlib.decompress(idat)
sys.exit(0 if len(set(pixels)) > 16 else 1)
PY
}

# Each figure file's <title> series names (gnuplot's svg terminal) include every expected one.
svg_has_series() {  # svg_has_series FILE NAME...
  local file=$1; shift
  python3 - "$file" "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()  # Fails on malformed XML.
assert root.tag.endswith('svg')
titles = {t.text for t in root.iter() if t.tag.endswith('title')}
missing = [n for n in sys.argv[2:] if n not in titles]
sys.exit(1 if missing else 0)
PY
}

# TFRecord framing and masked CRC-32C (Castagnoli) of every record, checked independently of the C++ code.
tfrecords_ok() {
  python3 - "$1" <<'PY'
import struct, sys
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF
def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
assert crc32c(b'123456789') == 0xE3069283
data = open(sys.argv[1], 'rb').read()
at = records = 0
while at < len(data):
    header = data[at:at + 8]
    (length,) = struct.unpack('<Q', header)
    assert struct.unpack('<I', data[at + 8:at + 12])[0] == masked(header), 'length crc'
    body = data[at + 12:at + 12 + length]
    assert struct.unpack('<I', data[at + 12 + length:at + 16 + length])[0] == masked(body), 'data crc'
    if records == 0:
        assert b'brain.Event:2' in body
    at += 16 + length
    records += 1
sys.exit(0 if records >= 3 else 1)
PY
}

check "a headless Chromium is installed (tools/bootstrap.sh: chromium-headless-shell)" test -n "$chromium"

# --- A real sweep: 4 runs (dense and SR-STE 2:4, two learning rates each).
start_server 0 --http_listen=127.0.0.1:0
http=$(sed -n 's|^nmserver dashboard on \(http://[^ ]*/\) .*|\1|p' "$tmp/nmserver-1.log")
check "nmserver prints the dashboard's address" test -n "$http"
start_worker w1
sweep=$(ctl submit "$sweep_yaml" --json | json "d['sweep']['id']")
check "the sweep's 4 runs succeed" wait_runs "$sweep" "len(runs)==4 and all(r['state']=='SUCCEEDED' for r in runs)" 240
runs=$(ctl runs --sweep "$sweep" --json | json "' '.join(str(r['id']) for r in d['runs'])")
first_run=${runs%% *}

# --- nmctl report
report="$tmp/report"
check "nmctl report writes the report" ctl report "$sweep" -o "$report"
figures="curves_loss curves_top1 top1_vs_density top1_vs_train_flops top1_vs_inference_flops"
for f in $figures; do
  check "index.html references $f.svg" grep -q "src=\"$f.svg\"" "$report/index.html"
done
# Every run has the same model: accuracy against parameters would be a column of dots (issue 40, item 3).
check "no top1 vs parameters figure when every run has the same size" \
  bash -c "! grep -q 'top1_vs_params' '$report/index.html' && test ! -e '$report/top1_vs_params.svg'"
# Legends name runs as nmctl does: "run ID axis=value ..." in axis order (label_axes), a random draw in nmctl's
# number format (4 significant digits below 1000: optimizer.lr=0.001738).
mapfile -t run_series < <(ctl runs --sweep "$sweep" --json | python3 -c "
import json, sys
def short(v):
    try:
        return '%.4g' % float(v) if any(c in v for c in '.eE') and abs(float(v)) < 1000 else v
    except ValueError:
        return v
for r in json.load(sys.stdin)['runs']:
    print(' '.join(['run %d' % r['id']] + ['%s=%s' % (a, short(r['labels'][a])) for a in r['label_axes']]))")
check "the loss curves have one series per run" svg_has_series "$report/curves_loss.svg" "${run_series[@]}"
check "the top1 curves have one series per run" svg_has_series "$report/curves_top1.svg" "${run_series[@]}"
check "top1 vs density has both recipes" svg_has_series "$report/top1_vs_density.svg" DENSE SRSTE
for f in top1_vs_train_flops top1_vs_inference_flops; do
  check "$f has both recipes and the Pareto front" svg_has_series "$report/$f.svg" DENSE SRSTE "Pareto front"
done
check "the table shows mean ± std over the two draws" grep -q "± .* (n=2)" "$report/index.html"
check "the report has plotly.js and figures.js beside it" test -s "$report/plotly.js" -a -s "$report/figures.js"
check "nmctl report --pdf writes the report" ctl report "$sweep" -o "$tmp/report_pdf" --pdf
for f in $figures; do
  check "$f.pdf is a PDF" bash -c "head -c 4 '$tmp/report_pdf/$f.pdf' | grep -q '%PDF'"
done
plotly_dom() { python3 "$(dirname "${BASH_SOURCE[0]}")/plotly_dom.py" "$@"; }
browser --dump-dom "file://$report/index.html" >"$tmp/report.dom"
# shellcheck disable=SC2086  # $figures is a list of ids.
check "the report's figures are drawn (plotly charts with points)" plotly_dom charts "$tmp/report.dom" $figures
check "the report's legends name the runs" plotly_dom literal "$tmp/report.dom" "${run_series[@]}"
browser --window-size=1280,1800 --screenshot="$tmp/report.png" "file://$report/index.html" >/dev/null
check "the report screenshot is a non-blank PNG" png_not_blank "$tmp/report.png"

# --- The model EMA (model.ema): its top1 beside the trained weights' in nmctl run, nmctl compare and the report
check "the report's runs table has an ema_top1 column" grep -q "<th>top1</th><th>ema_top1</th>" "$report/index.html"
ctl compare "$sweep" >"$tmp/compare.txt"
check "nmctl compare's table is the deployable top-1 with the EMA's beside it" \
  grep -Eq "deploy_top1 +ema_deploy_top1" "$tmp/compare.txt"
ctl compare "$sweep" --metric top1 >"$tmp/compare_top1.txt"
check "nmctl compare --metric top1 has an ema_top1 column beside top1" grep -Eq "top1 +ema_top1" "$tmp/compare_top1.txt"
ctl run "$first_run" >"$tmp/run.txt"
check "nmctl run shows the final ema_top1" grep -Eq "final: +.*ema_top1=[0-9.e-]+" "$tmp/run.txt"
check "nmctl run's metric table has ema_top1 per epoch" grep -Eq "ema_top1" <(grep -A3 "^metrics" "$tmp/run.txt")

# --- The sparse layers' diagnostics and FLOPs by recipe (docs/sparsity-method.md §10-§11)
ctl runs --sweep "$sweep" --json >"$tmp/runs.json"
srste_run=$(json "[r['id'] for r in d['runs'] if r['labels'].get('recipe') == 'srste_2_4'][0]" <"$tmp/runs.json")
ctl run "$srste_run" >"$tmp/srste_run.txt"
check "nmctl run shows the run's cost" \
  grep -Eq "cost: +training [0-9.e+]+ FLOPs, inference [0-9.e+]+ FLOPs/image, [0-9]+ parameters" "$tmp/srste_run.txt"
# Epochs for people are numbered from 1: the second epoch, the first with a previous mask to flip from.
check "nmctl run shows the second epoch's flip rate and gradient norms at 2:4" \
  grep -Eq "^ *2 +2:4 +0 +[0-9]" <(sed -n '/sparse layers per epoch/,/^$/p' "$tmp/srste_run.txt")
check "SR-STE 2:4 trains and infers on fewer FLOPs than dense (same images)" test "$(json "(lambda f: \
  f['srste_2_4']['flops'] < f['dense']['flops'] and f['srste_2_4']['inference_flops'] < f['dense']['inference_flops'])(\
  {r['labels']['recipe']: r['final_metrics'] for r in d['runs']})" <"$tmp/runs.json")" = True
mapfile -t srste_series < <(printf '%s\n' "${run_series[@]}" | grep "recipe=srste_2_4")
for f in diagnostics_flip_rate diagnostics_gradient_ratio; do
  check "index.html references $f.svg" grep -q "src=\"$f.svg\"" "$report/index.html"
  check "$f has the SR-STE runs" svg_has_series "$report/$f.svg" "${srste_series[@]}"
done

# --- TensorBoard export
tb="$tmp/tensorboard"
check "nmctl export --format tensorboard" ctl export "$sweep" --format tensorboard -o "$tb"
check "one event file per run" test "$(find "$tb" -name 'events.out.tfevents.*' | wc -l)" = 4
for f in "$tb"/*/events.out.tfevents.*; do
  check "$(basename "$(dirname "$f")"): records and CRCs read back" tfrecords_ok "$f"
done
if [[ -x "${NMSPARSE_TENSORBOARD_PYTHON:-}" ]]; then  # Optional: TensorBoard's own reader (docs/dashboard.md).
  check "TensorBoard's event reader loads the scalars" "$NMSPARSE_TENSORBOARD_PYTHON" - "$tb" <<'PY'
import glob, sys
from tensorboard.backend.event_processing import event_accumulator
for d in glob.glob(sys.argv[1] + '/*'):
    acc = event_accumulator.EventAccumulator(d); acc.Reload()
    tags = acc.Tags()['scalars']
    assert 'epoch/top1' in tags and 'final/top1' in tags, tags
    assert len(acc.Scalars('epoch/top1')) >= 2
PY
else
  log "skipped: TensorBoard reader check (set NMSPARSE_TENSORBOARD_PYTHON to a python with tensorboard)"
fi

# --- The dashboard: pages and JSON
check "GET / answers 200" test "$(http_code "$http")" = 200
check "/api/sweeps lists the sweep" test "$(curl -s "${http}api/sweeps" | json "[s['id'] for s in d['sweeps']]")" = "[$sweep]"
check "/api/sweeps/S/runs has the 4 runs" test "$(curl -s "${http}api/sweeps/$sweep/runs" | json "len(d['runs'])")" = 4
check "/api/sweeps/S/runs pages them" test "$(curl -s "${http}api/sweeps/$sweep/runs?limit=3&offset=3" | json "(d['total'], len(d['runs']))")" = "(4, 1)"
check "/api/sweeps/S says the sweep has ended" test "$(curl -s "${http}api/sweeps/$sweep" | json "d['ended']")" = True
etag=$(curl -s -D - -o /dev/null "${http}api/sweeps/$sweep" | sed -n 's/^ETag: \(.*\)\r$/\1/p')
check "an unchanged sweep's poll answers 304" test "$(http_code -H "If-None-Match: $etag" "${http}api/sweeps/$sweep")" = 304
check "a page past the limit is refused (400)" test "$(http_code "${http}api/sweeps/$sweep/runs?limit=100000")" = 400
check "/api/runs/R has epoch points" test "$(curl -s "${http}api/runs/$first_run" | json "sum(1 for p in d['metrics'] if p['kind']=='epoch')")" -ge 2
check "/api/runs/R/logs has lines" test "$(curl -s "${http}api/runs/$first_run/logs?from_seq=0" | json "len(d['lines'])")" -ge 1
check "a figure is served as SVG" svg_has_series <(curl -s "${http}sweeps/$sweep/report/top1_vs_density.svg") DENSE SRSTE
check "the report is served too" bash -c "curl -s '${http}sweeps/$sweep/report/' | grep -q 'src=\"curves_loss.svg\"'"
check "an unknown sweep is 404" test "$(http_code "${http}sweeps/999")" = 404
check "a body over the limit is refused (413)" test "$(http_code -X POST --data-binary "@$nmctl" "${http}login")" = 413
check "the gRPC API still answers after that" ctl sweeps
# Stalled HTTP clients (half a request line each, held open; more than the 24 threads the dashboard once had,
# and //server/dashboard:slow_clients_test checks it answers meanwhile): the gRPC API does not share their
# threads and still answers; the dashboard answers again once they are gone.
python3 - "${http#http://}" >"$tmp/stall.log" 2>&1 <<'PY' &
import socket, sys, time
host, port = sys.argv[1].rstrip('/').split(':')
held = []
for _ in range(30):
    s = socket.create_connection((host, int(port)))
    s.sendall(b'GET /api/sweeps HT')
    held.append(s)
print('holding', len(held), flush=True)
time.sleep(4)
PY
staller=$!
for _ in $(seq 50); do grep -q holding "$tmp/stall.log" && break; sleep 0.1; done
check "30 stalled HTTP clients are connected" grep -q "holding 30" "$tmp/stall.log"
check "the gRPC API answers while they stall the dashboard" ctl runs --sweep "$sweep"
wait "$staller"
check "the dashboard answers again after them" test "$(http_code "${http}api/sweeps")" = 200

# --- The dashboard in a real browser
browser --dump-dom "${http}sweeps/$sweep" >"$tmp/sweep.dom"
for f in $figures; do
  check "the sweep page links figure $f's SVG" grep -q "id=\"fig-$f\" href=\"/sweeps/$sweep/report/$f.svg\"" "$tmp/sweep.dom"
done
# shellcheck disable=SC2086
check "the sweep page draws its figures (plotly charts with points)" plotly_dom charts "$tmp/sweep.dom" $figures
check "/static/plotly.js is cached for long" bash -c \
  "curl -s -D - -o /dev/null '${http}static/plotly.js' | grep -qi 'cache-control: public, max-age=31536000'"
for r in $runs; do check "the sweep page lists run $r" grep -q "href=\"/runs/$r\"" "$tmp/sweep.dom"; done
check "the runs table shows SUCCEEDED" grep -q '<td class="SUCCEEDED">SUCCEEDED</td>' "$tmp/sweep.dom"
check "the ended sweep's page does not poll" grep -q 'the sweep has ended: not polling' "$tmp/sweep.dom"
browser --dump-dom "${http}runs/$first_run" >"$tmp/run.dom"
check "the run page's charts are drawn with points" plotly_dom charts "$tmp/run.dom" loss eval
check "the run page shows its logs" grep -q "epoch 1: loss" "$tmp/run.dom"
browser --window-size=1280,1700 --screenshot="$tmp/dashboard-sweep.png" "${http}sweeps/$sweep" >/dev/null
browser --window-size=1280,900 --screenshot="$tmp/dashboard-run.png" "${http}runs/$first_run" >/dev/null
check "the sweep page screenshot is a non-blank PNG" png_not_blank "$tmp/dashboard-sweep.png"
check "the run page screenshot is a non-blank PNG" png_not_blank "$tmp/dashboard-run.png"
if [[ -n "${NMSPARSE_REPORT_ARTEFACTS:-}" ]]; then
  mkdir -p "$NMSPARSE_REPORT_ARTEFACTS"
  cp -r "$report" "$NMSPARSE_REPORT_ARTEFACTS/report"
  # The scripts are not kept: Debian's 8 MB plotly.js, and figures.js, whose source is report/web/figures.js
  # (a copy in docs/ would drift from it); nmctl report copies both anew.
  rm -f "$NMSPARSE_REPORT_ARTEFACTS/report/plotly.js" "$NMSPARSE_REPORT_ARTEFACTS/report/figures.js"
  cp "$tmp/report.png" "$tmp/dashboard-sweep.png" "$tmp/dashboard-run.png" "$NMSPARSE_REPORT_ARTEFACTS/"
  # A search's views: the report of a 4-run TPE search from its title to them (a headless screenshot does not
  # follow a scroll: what comes between is hidden), its best run chosen under the parallel coordinates (so
  # highlighted in every figure).
  search=$(ctl submit "$search_yaml" --json | json "d['sweep']['id']")
  check "the search's 4 runs succeed" wait_runs "$search" "len(runs)==4 and all(r['state']=='SUCCEEDED' for r in runs)" 600
  check "nmctl report writes the search's report" ctl report "$search" -o "$tmp/search_report"
  cat >>"$tmp/search_report/index.html" <<'HTML'
<script>
window.addEventListener('load', () => setTimeout(() => {
  const doc = JSON.parse(document.getElementById('nm-figures').textContent);
  const parallel = doc.figures.find(f => f.kind === 'parallel');
  const objective = parallel.dimensions[parallel.dimensions.length - 1].values;
  const chooser = document.querySelector('.nm-run-chooser select');
  chooser.value = String(parallel.run_ids[objective.indexOf(Math.max(...objective))]);
  chooser.dispatchEvent(new Event('change'));
  const first = document.getElementById(doc.figures.find(f => f.id.startsWith('search_')).id);
  for (let n = document.querySelector('h1').nextElementSibling; n && n !== first; n = n.nextElementSibling) {
    if (n.id !== 'nm-figure-controls') n.style.display = 'none';
  }
}, 1000));
</script>
HTML
  browser --window-size=1280,2000 --screenshot="$tmp/search-views.png" "file://$tmp/search_report/index.html" >/dev/null
  check "the search views screenshot is a non-blank PNG" png_not_blank "$tmp/search-views.png"
  cp "$tmp/search-views.png" "$NMSPARSE_REPORT_ARTEFACTS/"
fi

# --- With tokens: the same check as the gRPC API
stop_worker "${worker_pid[w1]}"; unset "worker_pid[w1]"
stop_pid "$server_pid"
mkdir -p "$tmp/tokens"
"$nmserver" init --db="$db" --token_dir="$tmp/tokens" >"$tmp/init.log" 2>&1
"$nmserver" token add carol --role user --token_file="$tmp/tokens/carol.token" --db="$db" >/dev/null 2>&1
start_server 0 --http_listen=127.0.0.1:0
http=$(sed -n 's|^nmserver dashboard on \(http://[^ ]*/\) .*|\1|p' "$tmp/nmserver-$server_starts.log")
check "the dashboard says tokens are required" grep -q "dashboard on .*(tokens required)" "$tmp/nmserver-$server_starts.log"
user=$(cat "$tmp/tokens/carol.token"); worker=$(cat "$tmp/tokens/worker.token")
check "the user and worker tokens exist" test -n "$user" -a -n "$worker"
check "no token: 401" test "$(http_code "${http}api/sweeps")" = 401
check "no token on a page: 401" test "$(http_code "${http}sweeps/$sweep")" = 401
check "no token on the figures' scripts: 200 (public)" test "$(http_code "${http}static/plotly.js")$(http_code "${http}static/figures.js")" = 200200
check "an unknown token: 401" test "$(http_code -H "Authorization: Bearer nope" "${http}api/sweeps")" = 401
check "a user token: 200" test "$(http_code -H "Authorization: Bearer $user" "${http}api/sweeps")" = 200
check "a user token on a figure: 200" test "$(http_code -H "Authorization: Bearer $user" "${http}sweeps/$sweep/report/curves_loss.svg")" = 200
check "a worker token: 403" test "$(http_code -H "Authorization: Bearer $worker" "${http}api/sweeps")" = 403
own=(-H "Origin: ${http%/}")  # What a browser sends from the dashboard's own login page.
cookie=$(curl -s -o /dev/null -D - "${own[@]}" --data-urlencode "token=$user" "${http}login" | tr -d '\r' | sed -n 's/^Set-Cookie: \([^;]*\);.*/\1/p')
check "/login sets an HttpOnly cookie" test -n "$cookie"
check "the cookie reads: 200" test "$(http_code -H "Cookie: $cookie" "${http}api/sweeps/$sweep")" = 200
check "/login with a wrong token: 401" test "$(http_code "${own[@]}" --data-urlencode "token=nope" "${http}login")" = 401
check "/login from another site: 403" test "$(http_code -H "Origin: http://evil.example" --data-urlencode "token=$user" "${http}login")" = 403
check "no token in the server's logs" bash -c "! grep -qF -e '$user' -e '$worker' '$tmp'/nmserver-*.log"

finish
