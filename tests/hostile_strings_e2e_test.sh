#!/usr/bin/env bash
# User strings are data (docs/security.md, issue 22), end to end: the real nmserver (with its dashboard),
# nmworker and nmctl on loopback, a stand-in trainer (tests/testdata/hostile_trainer.sh) that prints hostile
# log lines, metric names and label values, and a sweep whose name, grid axis and labels carry the corpus:
# backquotes, $(...), ;|&, quotes of every kind, \n\r\t, ESC and other C0 and C1 controls, U+202E, =+-@
# prefixes, ../, gnuplot and HTML syntax; bytes that are not UTF-8 and 1 MiB / 100 KB strings where they can
# enter. Through every output path: nmctl's tables and --json (sweeps, runs, run, compare, best, logs, watch,
# follow, submit, validate), nmctl report (HTML and SVG), the dashboard's pages, figures and JSON over HTTP,
# CSV and JSON export, TensorBoard export, nmserver's token commands. For each: no command ran (the canary
# directory stays empty), every SVG and HTML page parses, terminal output holds no raw control character and
# is valid UTF-8, CSV cells are neutralised, and output stays bounded.
#
# Usage: hostile_strings_e2e_test.sh NMSERVER NMWORKER NMCTL HOSTILE_TRAINER
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); trainer=$(realpath "$4")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/hostile.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
# Every hostile command, if anything ran it, would create a file here. A short path of its own, so that a label
# naming it three times stays within the coordinator's 256-byte bound on labels (schemas/limits.h).
canary=$(mktemp -d /tmp/nmcanary.XXXXXX)
out="$tmp/out"  # What each output path printed.
mkdir -p "$out"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"
trap 'cleanup; rm -rf "$canary"' EXIT

start_worker() {  # start_worker NAME
  "$nmworker" --coordinator="$NMSPARSE_COORDINATOR" --work_dir="$work" --trainer="$trainer" --cpu-slots=2 \
    --host="$1" >"$tmp/nmworker-$1.log" 2>&1 &
  worker_pid[$1]=$!
}
http_code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
chromium=$(command -v chromium-headless-shell || command -v chromium || true)
browser_dom() {  # browser_dom URL: the DOM after the page's scripts ran (and polled) for 6 s of virtual time.
  "$chromium" --headless --no-sandbox --disable-gpu --virtual-time-budget=6000 --user-data-dir="$tmp/chromium" \
    --dump-dom "$1" 2>>"$tmp/chromium.log"
}
no_canary() { test -z "$(ls -A "$canary")"; }

# Terminal-safe: valid UTF-8, and no C0 control but \t and \n, no DEL, no C1 control, no bidi control.
terminal_safe() {  # terminal_safe FILE...
  python3 - "$@" <<'PY'
import sys
bad_chars = set(range(0x00, 0x09)) | set(range(0x0b, 0x20)) | set(range(0x7f, 0xa0)) | \
    {0x061c, 0x200e, 0x200f, 0x2028, 0x2029} | set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a))
ok = True
for path in sys.argv[1:]:
    try:
        text = open(path, 'rb').read().decode('utf-8')
    except UnicodeDecodeError as e:
        print(f'{path}: not UTF-8: {e}', file=sys.stderr); ok = False; continue
    found = sorted({hex(ord(c)) for c in text if ord(c) in bad_chars})
    if found:
        print(f'{path}: raw control characters {found}', file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY
}
smaller_than() { test "$(stat -c %s "$1")" -lt "$2"; }  # smaller_than FILE BYTES
json_parses() { python3 -c 'import json,sys; [json.load(open(p)) for p in sys.argv[1:]]' "$@"; }
json_lines_parse() { python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$1"; }
json_ok() { json_parses "$1" && terminal_safe "$1"; }
json_lines_ok() { json_lines_parse "$1" && terminal_safe "$1"; }
short_and_safe() { terminal_safe "$1" && smaller_than "$1" "$2"; }  # short_and_safe FILE BYTES
svg_parses() {  # Strict XML, an <svg> root.
  python3 -c 'import sys, xml.etree.ElementTree as ET; assert all(ET.parse(p).getroot().tag.endswith("svg") for p in sys.argv[1:])' "$@"
}
# An HTML page parses, its title is terminal-safe, and no hostile text became markup or script.
html_safe() {  # html_safe FILE
  python3 - "$1" <<'PY'
import sys
from html.parser import HTMLParser
class Page(HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []; self.title = ''; self.script = ''; self.bad = []
    def handle_starttag(self, tag, attrs):
        # A JSON data block (the figures' data, report/figure_json.h) is not run: it holds the labels as data.
        self.stack.append('json' if tag == 'script' and ('type', 'application/json') in attrs else tag)
        if tag in ('b', 'iframe', 'img') and any('alert' in (v or '') for _, v in attrs): self.bad.append(tag)
    def handle_endtag(self, tag):
        if tag == 'script' and self.stack and self.stack[-1] == 'json': tag = 'json'
        if tag in self.stack: del self.stack[len(self.stack) - 1 - self.stack[::-1].index(tag):]
    def handle_data(self, data):
        if 'title' in self.stack: self.title += data
        if 'script' in self.stack: self.script += data
page = Page(); page.feed(open(sys.argv[1], encoding='utf-8').read()); page.close()
assert 'alert(1)' not in page.script, 'hostile text inside a <script>'
assert not page.bad, page.bad
assert '\u202e' not in page.title and not any(ord(c) < 0x20 for c in page.title), repr(page.title)
PY
}
csv_neutralised() {  # Every row has the header's columns; no cell begins with = + - @ unless it is a number.
  python3 - "$1" <<'PY'
import csv, re, sys
rows = list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8')))
assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows), [len(r) for r in rows]
number = re.compile(r'[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$')
bad = [c for r in rows for c in r if c[:1] in ('=', '+', '-', '@', '\t', '\r') and not number.match(c)]
assert not bad, bad
PY
}

# --- The corpus, as a sweep: the name, the grid axis's name and its labels.
python3 - "$tmp/hostile.yaml" "$canary" <<'PY'
import json, sys
path, c = sys.argv[1], sys.argv[2]
labels = [
    f'"`id > {c}/PWNED`"',                                  # issue 22's reproduction
    f'`touch {c}/backquote`',
    f'$(touch {c}/dollar)',
    f'; touch {c}/semi | touch {c}/pipe & touch {c}/amp',
    'quotes \' " \u2018\u2019 \u201c\u201d \\ back\\slash',
    'nl\nfake row\r\ttab',
    'esc\x1b[2J\x1b]0;pwned\x07 c0\x01 del\x7f c1\u0085\u009b',
    'rlo\u202egnp.exe',
    '=HYPERLINK("http://x","y")', '+1+cmd', '-2+3', '@SUM(A1)',
    '../../../etc/passwd',
    '@GPVAL_TERM <b onmouseover=alert(1)>x</b> <img src=x onerror=alert(1)> <script>alert(1)</script> &amp;',
]
base = {'name': 'hostile', 'seed': 0, 'model': {'name': 'vit_nano_patch7_28'},
        'data': {'dataset': 'fashion_mnist', 'train_subset': 500, 'eval_subset': 200, 'batch_size': 50},
        'optimizer': {'name': 'adamw', 'lr': 0.002}, 'schedule': {'epochs': 2},
        'resources': {'gpus': 1, 'cpu_threads': 1}, 'sparsity': {'sparsity_loc': 'FF'}}
sweep = {'name': f'hostile \x1b[31m\u202e `touch {c}/name` $(touch {c}/name2)\n<script>alert(1)</script>',
         'base': base,
         # Each value sets a learning rate besides the seed: a parameter axis, so that the labels name runs in
         # the legends (an axis that sets only the seed is a replicate: its runs are drawn as one band).
         'grid': {'rec\x1bipe\u202e`id`': {label: {'seed': i, 'optimizer.lr': 0.001 * (i + 1)}
                                          for i, label in enumerate(labels)}},
         'max_retries': 0}
open(path, 'w').write(json.dumps(sweep))  # JSON is YAML.
PY
runs_expected=14  # The stand-in fails the run of seed 5 (the label with a newline), its stderr in the run's message.

start_server 0 --http_listen=127.0.0.1:0
http=$(sed -n 's|^nmserver dashboard on \(http://[^ ]*/\) .*|\1|p' "$tmp/nmserver-1.log")
check "nmserver prints the dashboard's address" test -n "$http"
start_worker w1

ctl validate "$tmp/hostile.yaml" >"$out/validate.txt" 2>"$out/validate.err"
check "nmctl validate accepts the hostile sweep" test $? -eq 0
ctl submit "$tmp/hostile.yaml" --idempotency-key $'key\x1b[2J\xe2\x80\xae' >"$out/submit.txt" 2>"$out/submit.err"
check "nmctl submit takes it" test $? -eq 0
sweep=$(ctl sweeps --json | json "d['sweeps'][0]['id']")
check "its $runs_expected runs end, one FAILED" wait_runs "$sweep" \
  "len(runs)==$runs_expected and sum(r['state']=='SUCCEEDED' for r in runs)==$runs_expected-1 and sum(r['state']=='FAILED' for r in runs)==1" 120
runs=$(ctl runs --sweep "$sweep" --json | json "' '.join(str(r['id']) for r in d['runs'])")
run=${runs%% *}

# --- nmctl: tables and --json.
ctl sweeps >"$out/sweeps.txt" 2>&1
ctl runs --sweep "$sweep" >"$out/runs.txt" 2>&1
ctl run "$run" >"$out/run.txt" 2>&1
ctl compare "$sweep" --metric top1 >"$out/compare.txt" 2>&1
ctl best "$sweep" --metric top1 -k 20 >"$out/best.txt" 2>&1
ctl best "$sweep" --metric $'m\x1b[2J\xe2\x80\xae' >"$out/best_unknown.txt" 2>&1
ctl logs "$run" >"$out/logs.txt" 2>&1
timeout 60 "$nmctl" watch "$run" --logs >"$out/watch.txt" 2>&1
timeout 60 "$nmctl" follow "$sweep" >"$out/follow.txt" 2>&1
ctl export "$sweep" --format csv >"$out/export.csv" 2>"$out/export_csv.err"
ctl export "$sweep" --format csv --curves >"$out/export_curves.csv" 2>"$out/export_curves.err"
ctl export "$sweep" --format json --curves >"$out/export.json" 2>"$out/export_json.err"
for f in validate submit sweeps runs run compare best best_unknown logs watch follow export export_curves; do
  check "nmctl $f: no raw control character, valid UTF-8" terminal_safe "$out/$f".*
done
check "the sweeps table has one line per sweep and two of header" test "$(wc -l <"$out/sweeps.txt")" -eq 3
check "the runs table has one line per run" test "$(wc -l <"$out/runs.txt")" -eq $((runs_expected + 2))
check "a newline in a label is shown, not printed" grep -qF 'nl\x0afake row\x0d\x09tab' "$out/runs.txt"
check "ESC is shown as \\x1b" grep -qF 'esc\x1b[2J\x1b]0;pwned\x07 c0\x01 del\x7f c1\u0085\u009b' "$out/runs.txt"
check "U+202E is shown as \\u202e" grep -qF 'rlo\u202egnp.exe' "$out/runs.txt"
check "the failed run's WHY (the trainer's stderr, lines) stays in its row" grep -qF '(training error):\x0a=HYPERLINK' "$out/runs.txt"
check "nmctl logs shows the trainer's lines, escaped" grep -qF 'esc \x1b[2J\x1b]0;pwned\x07 c0 \x01 del \x7f c1 \u0085\u009b rlo \u202e bad' "$out/logs.txt"
check "nmctl logs shows a byte that is not UTF-8 as U+FFFD" grep -q $'bad \xef\xbf\xbd' "$out/logs.txt"
check "the compare table has a row per label" test "$(grep -c '^' "$out/compare.txt")" -ge $((runs_expected + 3))
check "an unknown metric in best is shown escaped" grep -qF 'm\x1b[2J\u202e' "$out/best_unknown.txt"
for cmd in "sweeps" "runs --sweep $sweep" "run $run" "compare $sweep --metric top1" "best $sweep -k 20"; do
  name=${cmd%% *}
  ctl $cmd --json >"$out/$name.json" 2>"$out/$name.json.err"
  check "nmctl $name --json parses and is terminal-safe" json_ok "$out/$name.json"
done
ctl logs "$run" --json >"$out/logs.jsonl" 2>&1
check "nmctl logs --json: JSON lines, terminal-safe" json_lines_ok "$out/logs.jsonl"
check "--json keeps the labels exactly" python3 - "$out/runs.json" <<'PY'
import json, sys
labels = [v for r in json.load(open(sys.argv[1]))['runs'] for v in r['labels'].values()]
assert 'nl\nfake row\r\ttab' in labels and 'rlo\u202egnp.exe' in labels, labels
PY
timeout 60 "$nmctl" watch "$run" --logs --json >"$out/watch.jsonl" 2>&1
check "nmctl watch --json: JSON lines, terminal-safe" json_lines_ok "$out/watch.jsonl"

# --- Exports.
check "CSV export: cells neutralised, one row per run" csv_neutralised "$out/export.csv"
check "CSV export: a row per run and a header" test "$(wc -l <"$out/export.csv")" -eq $((runs_expected + 1))
check "CSV export with curves: cells neutralised" csv_neutralised "$out/export_curves.csv"
check "CSV export shows the formula label quoted" grep -qF "'=HYPERLINK(" "$out/export.csv"
check "JSON export parses and is terminal-safe" json_ok "$out/export.json"
tb="$tmp/tensorboard"
ctl export "$sweep" --format tensorboard -o "$tb" >"$out/tensorboard.txt" 2>&1
check "TensorBoard export: one directory per run, inside -o" \
  test "$(find "$tb" -mindepth 2 -name 'events.out.tfevents.*' | wc -l)" -eq "$runs_expected" -a \
  "$(find "$tb" -mindepth 1 -maxdepth 1 -type d | wc -l)" -eq "$runs_expected"
check "TensorBoard export: nothing outside -o" test ! -e "$tmp/etc" -a ! -e "$work/etc"
check "TensorBoard export: its message is terminal-safe" terminal_safe "$out/tensorboard.txt"
check "TensorBoard export: every tag is terminal-safe UTF-8 of at most 256 characters" python3 - "$tb" <<'PY'
import glob, struct, sys
def fields(data):  # (field number, wire type, value) of a protobuf message.
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0: value, at = varint(data, at)
        elif wire == 1: value, at = data[at:at + 8], at + 8
        elif wire == 5: value, at = data[at:at + 4], at + 4
        elif wire == 2:
            length, at = varint(data, at); value, at = data[at:at + length], at + length
        else: raise ValueError(wire)
        yield number, wire, value
def varint(data, at):
    value = shift = 0
    while True:
        b = data[at]; at += 1; value |= (b & 0x7f) << shift; shift += 7
        if b < 0x80: return value, at
tags = []
for path in glob.glob(sys.argv[1] + '/*/events.out.tfevents.*'):
    data, at = open(path, 'rb').read(), 0
    while at < len(data):
        (length,) = struct.unpack('<Q', data[at:at + 8])
        event = data[at + 12:at + 12 + length]
        at += 16 + length
        for n, _, summary in fields(event):
            if n != 5: continue
            for m, _, value in fields(summary):
                tags += [t.decode('utf-8') for k, w, t in fields(value) if m == 1 and k == 1 and w == 2]
assert any(t.startswith('step/=cmd') for t in tags), tags
bad = [t for t in tags if len(t) > 256 or any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 or c == '\u202e' for c in t)]
assert not bad, bad
PY

# --- nmctl report: the HTML and every SVG parse; a hostile --metric names no file outside -o.
report="$tmp/report"
ctl report "$sweep" -o "$report" >"$out/report.txt" 2>&1
check "nmctl report writes the report" test -s "$report/index.html"
check "every figure of the report is well-formed XML" svg_parses "$report"/*.svg
check "index.html parses; no label became markup; the title shows no RLO" html_safe "$report/index.html"
check "the legend shows the reproduction's label, escaped" \
  grep -qF "<title>run $run rec\\x1bipe\\u202e\`id\`=&quot;\`id &gt; " "$report/curves_loss.svg"
check "no SVG holds a raw control character" terminal_safe "$report"/*.svg
ctl report "$sweep" -o "$tmp/report2" --metric '../../metric' >"$out/report2.txt" 2>&1
check "a --metric of ../../metric writes only inside -o" \
  test ! -e "$tmp/metric.svg" -a -z "$(find "$tmp/report2" -mindepth 1 -type d)" -a -s "$tmp/report2/index.html"

# --- The dashboard over HTTP: pages, figures (drawn inside nmserver) and JSON.
curl -s "$http" >"$out/dash_sweeps.html"
curl -s "${http}sweeps/$sweep" >"$out/dash_sweep.html"
curl -s "${http}sweeps/$sweep/report/" >"$out/dash_report.html"
curl -s "${http}runs/$run" >"$out/dash_run.html"
for page in dash_sweeps dash_sweep dash_report dash_run; do
  check "dashboard $page parses, no label became markup" html_safe "$out/$page.html"
  check "dashboard $page is terminal-safe" terminal_safe "$out/$page.html"
done
# Every figure the report drew (a final-metric figure whose x has one value is not drawn: one density here).
for f in $(cd "$report" && ls *.svg | sed 's/\.svg$//'); do
  curl -s "${http}sweeps/$sweep/report/$f.svg" >"$out/dash_$f.svg"
  check "dashboard figure $f is well-formed XML" svg_parses "$out/dash_$f.svg"
done
for api in "api/sweeps" "api/sweeps/$sweep" "api/sweeps/$sweep/runs" "api/runs/$run" "api/runs/$run/logs?from_seq=0"; do
  curl -s "$http$api" >"$out/api.json"
  check "dashboard $api: JSON, terminal-safe" json_ok "$out/api.json"
done
# In a browser, after the pages' scripts have re-read the JSON and rebuilt their tables and logs.
check "a headless Chromium is installed (tools/bootstrap.sh: chromium-headless-shell)" test -n "$chromium"
browser_dom "${http}sweeps/$sweep" >"$out/dom_sweep.html"
browser_dom "${http}runs/$run" >"$out/dom_run.html"
check "the polled runs table is in the DOM" grep -q '<td class="SUCCEEDED">SUCCEEDED</td>' "$out/dom_sweep.html"
check "the run page's log lines are in the DOM" grep -qF 'esc \x1b[2J' "$out/dom_run.html"
check "the scripts show labels and logs as the server does: no raw control, no RLO" \
  terminal_safe "$out/dom_sweep.html" "$out/dom_run.html"
# The interactive figures (figures.js with plotly.js) on the dashboard and in the report: drawn, and the labels'
# markup shown as text, no element made from it (Plotly renders <b>, <a>; an <img> would be the page's).
plotly_dom() { python3 "$(dirname "${BASH_SOURCE[0]}")/plotly_dom.py" "$@"; }
markup='<b onmouseover=alert(1)>x</b> <img src=x onerror=alert(1)>'
check "the dashboard's sweep page draws its figures" plotly_dom charts "$out/dom_sweep.html" curves_loss
check "... and shows the labels' markup as text in them" plotly_dom literal "$out/dom_sweep.html" "$markup"
browser_dom "file://$report/index.html" >"$out/dom_report.html"
check "the report draws its figures in a browser" plotly_dom charts "$out/dom_report.html" curves_loss
check "... and shows the labels' markup as text in them" plotly_dom literal "$out/dom_report.html" "$markup"
check "the report's DOM holds no raw control, no RLO" terminal_safe "$out/dom_report.html"
check "an id past int64 is 404" test "$(http_code "${http}sweeps/99999999999999999999")" = 404
check "... naming the id, not another one" bash -c "curl -s '${http}sweeps/99999999999999999999' | grep -q 'no sweep with id 99999999999999999999'"
check "a run id past int64 is 404 on the API too" test "$(http_code "${http}api/runs/99999999999999999999/logs")" = 404

# --- Strings that cannot or should not enter: refused cleanly, or bounded in every output.
python3 - "$tmp/hostile.yaml" "$tmp" <<'PY'
import json, sys
sweep = json.load(open(sys.argv[1]))
sweep['grid'] = {'axis': {'a': {'seed': 1}}}
def write(name, text):
    open(f'{sys.argv[2]}/{name}.yaml', 'wb').write(text)
write('not_utf8', json.dumps(dict(sweep, name='bad NOT_UTF8 name')).encode().replace(b'NOT_UTF8', b'\xff\xfe'))
write('mib', json.dumps(dict(sweep, name='n' * (1 << 20))).encode())  # Past nmctl's 1 MiB spec limit.
# A key past YAML's 1024 characters of an implicit key: written as an explicit key ("? KEY").
write('long', ('name: "%s"\nbase: %s\ngrid:\n  axis:\n    ? "%s"\n    : {seed: 1}\nmax_retries: 0\n' %
               ('N' * 100000, json.dumps(sweep['base']), 'L' * 100000)).encode())
PY
ctl submit "$tmp/not_utf8.yaml" >"$out/not_utf8.txt" 2>&1
not_utf8_rc=$?
check "a name that is not UTF-8: stored and shown as U+FFFD, or refused cleanly" terminal_safe "$out/not_utf8.txt"
if ((not_utf8_rc != 0)); then
  check "... the refusal says why in one short message" smaller_than "$out/not_utf8.txt" 2000
  log "a name that is not UTF-8 was refused at submit: $(head -c 300 "$out/not_utf8.txt")"
fi
ctl submit "$tmp/mib.yaml" >"$out/mib.txt" 2>&1
check "a 1 MiB name is refused" test $? -ne 0
check "... with a short, clean message" short_and_safe "$out/mib.txt" 2000
ctl submit "$tmp/long.yaml" >"$out/long_submit.txt" 2>&1
long_rc=$?
check "a 100 KB name and label: the submit's answer is short and clean" short_and_safe "$out/long_submit.txt" 4000
if ((long_rc == 0)); then  # Accepted: every output stays bounded (no padding of every row to its width).
  long=$(ctl sweeps --json | json "[s['id'] for s in d['sweeps'] if s['name'].startswith('NNN')][0]")
  wait_runs "$long" "all(r['state']=='SUCCEEDED' for r in runs)" 60 >/dev/null
  ctl sweeps >"$out/long_sweeps.txt" 2>&1
  ctl runs >"$out/long_runs.txt" 2>&1
  check "... nmctl sweeps stays small" smaller_than "$out/long_sweeps.txt" 16000
  check "... nmctl runs stays small" smaller_than "$out/long_runs.txt" 40000
  curl -s "$http" >"$out/long_dash.html"
  check "... the dashboard's sweep list stays small" smaller_than "$out/long_dash.html" 40000
  curl -s "${http}sweeps/$long/report/curves_loss.svg" >"$out/long.svg"
  check "... its figure parses" svg_parses "$out/long.svg"
  check "... and stays small" smaller_than "$out/long.svg" 100000
else
  log "a 100 KB name and label were refused at submit: $(head -c 300 "$out/long_submit.txt")"
fi

# --- Token names: a plain identifier, refused otherwise with the value shown; "bearer" in any case.
stop_worker "${worker_pid[w1]}"; unset "worker_pid[w1]"
stop_pid "$server_pid"
mkdir -p "$tmp/tokens"
"$nmserver" init --db="$db" --token_dir="$tmp/tokens" >"$out/init.txt" 2>&1
for name in $'evil\x1b[31m' $'new\nline' 'al ice' $'adm\xd1\x96n' '../x' "$(printf 'x%.0s' $(seq 65))"; do
  "$nmserver" token add "$name" --role user --token_file="$tmp/tokens/refused.token" --db="$db" >"$out/token.txt" 2>&1
  rc=$?
  check "token name $(printf %q "$name" | head -c 40): refused (exit 2)" test "$rc" -eq 2
  check "... with a terminal-safe message naming the rule" terminal_safe "$out/token.txt"
  check "... which names the rule" grep -q 'letters, digits' "$out/token.txt"
done
check "no token file was written for them" test ! -e "$tmp/tokens/refused.token"
"$nmserver" token add carol --role user --token_file="$tmp/tokens/carol.token" --db="$db" >/dev/null 2>&1
check "a plain name is accepted" test -s "$tmp/tokens/carol.token"
start_server 0 --http_listen=127.0.0.1:0
http=$(sed -n 's|^nmserver dashboard on \(http://[^ ]*/\) .*|\1|p' "$tmp/nmserver-$server_starts.log")
user=$(cat "$tmp/tokens/carol.token")
check "Authorization: Bearer: 200" test "$(http_code -H "Authorization: Bearer $user" "${http}api/sweeps")" = 200
check "authorization: bearer (lower case): 200" test "$(http_code -H "authorization: bearer $user" "${http}api/sweeps")" = 200
check "BEARER: 200" test "$(http_code -H "Authorization: BEARER $user" "${http}api/sweeps")" = 200
check "Basic: 401" test "$(http_code -H "Authorization: Basic $user" "${http}api/sweeps")" = 401
check "the figures still draw with tokens" test "$(http_code -H "authorization: bearer $user" "${http}sweeps/$sweep/report/curves_loss.svg")" = 200

# --- After everything: nothing ran.
check "no hostile string ran a command (the canary directory is empty)" no_canary
ls -A "$canary" >&2
finish
