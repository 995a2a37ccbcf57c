#include "server/dashboard/pages.h"

#include <mstch/mstch.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nmsparse/v1/sweep.pb.h"
#include "report/figure_json.h"
#include "report/html_page.h"
#include "report/web_assets.h"

namespace nmsparse::server {
namespace {

constexpr char kStaticBase[] = "/static/";  // dashboard_server.cc serves plotly.js and figures.js there.

constexpr char kHead[] = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>nmsparse {{title}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em 2em; color: #222; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 3px 8px; text-align: left; }
th a { color: inherit; } .num { text-align: right; font-variant-numeric: tabular-nums; }
.SUCCEEDED { color: #176317; } .FAILED { color: #a31515; } .RUNNING { color: #1c4fa0; }
.figures, .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(600px, 1fr)); gap: 12px; }
.figure { border: 1px solid #ddd; padding: 4px; } .chart { min-height: 440px; }
.static { font-size: 85%; color: #555; margin: 2px 6px; }
#nm-figure-controls { position: sticky; top: 0; background: #fff; padding: 6px 0; z-index: 10; }
pre#logs { background: #f4f4f4; max-height: 24em; overflow: auto; padding: 8px; font-size: 85%; }
</style></head><body>
<nav><a href="/">sweeps</a>{{#sweep_id}}<a href="/sweeps/{{sweep_id}}">sweep {{sweep_id}}</a>{{/sweep_id}}</nav>
)";

constexpr char kPoll[] = R"(<script>
// Re-reads URL every few seconds and hands the JSON to UPDATE; stops on an error (e.g. a revoked token).
function poll(url, update, ms) {
  const tick = () => fetch(url, {credentials: 'same-origin'})
      .then(r => r.ok ? r.json() : Promise.reject(r.status))
      .then(d => { if (update(d) !== false) setTimeout(tick, ms); })
      .catch(e => { const s = document.getElementById('status'); if (s) s.textContent = 'polling stopped: ' + e; });
  setTimeout(tick, ms);
}
// User text as the server renders it (common/visible_text.h): display controls and bidi overrides as escapes.
const hidden = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufffe\uffff]/g;
function visible(t) {
  return String(t).replace(hidden, c => { const n = c.charCodeAt(0);
    return n < 0x80 ? '\\x' + n.toString(16).padStart(2, '0') : '\\u' + n.toString(16).padStart(4, '0'); });
}
function cell(text, cls) { const td = document.createElement('td'); td.textContent = visible(text); if (cls) td.className = cls; return td; }
</script>
<p id="status"></p>
)";

constexpr char kSweeps[] = R"(<h1>Sweeps</h1>
<table id="sweeps"><thead><tr><th>id</th><th>name</th><th>by</th><th>runs</th><th>created</th></tr></thead>
<tbody>{{#sweeps}}<tr><td><a href="/sweeps/{{id}}">{{id}}</a></td><td>{{name}}</td><td>{{by}}</td>
<td>{{counts}}</td><td>{{created}}</td></tr>{{/sweeps}}</tbody></table>
<script>
poll('/api/sweeps', d => {
  const body = document.querySelector('#sweeps tbody');
  body.replaceChildren(...d.sweeps.map(s => {
    const tr = document.createElement('tr');
    const a = document.createElement('a'); a.href = '/sweeps/' + s.id; a.textContent = s.id;
    const td = document.createElement('td'); td.appendChild(a); tr.appendChild(td);
    const counts = Object.keys(s.run_counts).sort().map(k => s.run_counts[k] + ' ' + k).join(', ');
    [s.name, s.submitted_by || '-', counts, new Date(s.created_at_ms).toISOString()].forEach(t => tr.appendChild(cell(t)));
    return tr;
  }));
}, 5000);
</script></body></html>
)";

constexpr char kSweep[] = R"(<h1>Sweep {{sweep_id}}: {{name}}</h1>
<p><a href="/sweeps/{{sweep_id}}/report/">the report</a> (the same page <code>nmctl report</code> writes)</p>
{{#search_ended}}<p id="search-ended" class="FAILED">search ended early: {{search_ended}}</p>{{/search_ended}}
<h2>Runs</h2>
<form id="run-filter" onsubmit="return false">
<label>filter <input id="q" name="q" size="24" placeholder="label text or run id"></label>
<label>state <select id="state-filter"><option value="">any</option>{{#states}}<option>{{.}}</option>{{/states}}</select></label>
<button type="button" id="prev">&lt;</button> <span id="range">{{range}}</span> <button type="button" id="next">&gt;</button>
</form>
<table id="runs" data-version="{{version}}" data-ended="{{ended}}"><thead><tr>{{#columns}}<th class="{{class}}" aria-sort="{{aria}}"><a href="{{href}}" data-sort="{{sort}}">{{text}}</a></th>{{/columns}}</tr></thead>
<tbody>{{#runs}}<tr><td><a href="/runs/{{id}}">{{id}}</a></td><td>{{labels}}</td><td class="{{state}}">{{state}}</td>
<td>{{attempt}}</td>{{#cells}}<td class="num">{{.}}</td>{{/cells}}</tr>{{/runs}}</tbody></table>
<h2>Figures</h2>
<div id="nm-figure-controls"></div>
<div class="figures" id="figures"></div>
<script>
// The table is a page of the server's (GET /api/sweeps/S/runs: filtered, sorted and cut there); the rows'
// text is the server's too (one formatter for this first render and every poll). The page polls the sweep's
// small summary and re-reads the table and figures only when its version changed; it stops once the sweep
// has ended.
// A column's header sorts the whole sweep by it (on the server: the table is paged), a second click the other
// way; the sort is in the page's URL (?sort=top1&desc=1), so a sorted view can be linked and reloaded.
const table = document.getElementById('runs');
const fromUrl = new URLSearchParams(location.search);
const query = {offset: 0, limit: 100, q: '', state: '', sort: fromUrl.get('sort') || 'id',
               desc: ['1', 'true'].includes(fromUrl.get('desc')) ? 1 : 0};
const baseColumns = [['id', 'run'], ['labels', 'labels'], ['state', 'state'], ['attempt', 'try']];
function sortHref(key) {
  const p = new URLSearchParams({sort: key});
  if (key === query.sort && !query.desc) p.set('desc', '1');
  return '?' + p;
}
function showHeader(metrics) {
  const row = table.tHead.rows[0];
  row.replaceChildren(...baseColumns.concat(metrics.map(m => [m, m])).map(([key, text], i) => {
    const th = document.createElement('th');
    if (i >= baseColumns.length) th.className = 'num';
    th.setAttribute('aria-sort', key !== query.sort ? 'none' : query.desc ? 'descending' : 'ascending');
    const a = document.createElement('a'); a.href = sortHref(key); a.dataset.sort = key;
    a.textContent = visible(text) + (key === query.sort ? (query.desc ? ' \u25bc' : ' \u25b2') : '');
    th.appendChild(a);
    return th;
  }));
}
table.tHead.addEventListener('click', e => {
  const a = e.target.closest('a[data-sort]');
  if (!a) return;
  e.preventDefault();
  query.desc = a.dataset.sort === query.sort && !query.desc ? 1 : 0;
  query.sort = a.dataset.sort; query.offset = 0;
  history.replaceState(null, '', '?' + new URLSearchParams(query.desc ? {sort: query.sort, desc: '1'} : {sort: query.sort}));
  loadRuns();
});
function range(d) {
  const last = Math.min(d.offset + d.runs.length, d.matched);
  return (d.matched ? (d.offset + 1) + '-' + last : '0') + ' of ' + d.matched + (d.matched !== d.total ? ' (' + d.total + ' runs)' : '');
}
function showRuns(d) {
  showHeader(d.metrics);
  table.tBodies[0].replaceChildren(...d.runs.map(r => {
    const tr = document.createElement('tr');
    const a = document.createElement('a'); a.href = '/runs/' + r.id; a.textContent = r.id;
    const td = document.createElement('td'); td.appendChild(a); tr.appendChild(td);
    tr.appendChild(cell(r.labels)); tr.appendChild(cell(r.state, r.state));
    tr.appendChild(cell(r.attempt));
    d.metrics.forEach(m => tr.appendChild(cell(r.final_texts[m] ?? '-', 'num')));  // The server's text.
    return tr;
  }));
  document.getElementById('range').textContent = range(d);
  query.matched = d.matched;
}
function loadRuns() {
  const params = new URLSearchParams(query); params.delete('matched');
  return fetch('/api/sweeps/{{sweep_id}}/runs?' + params, {credentials: 'same-origin'})
      .then(r => r.ok ? r.json() : r.text().then(t => Promise.reject(t)))
      .then(showRuns)
      .catch(e => { document.getElementById('status').textContent = 'runs: ' + e; });
}
function refilter() {
  query.q = document.getElementById('q').value; query.state = document.getElementById('state-filter').value;
  query.offset = 0; loadRuns();
}
['q', 'state-filter'].forEach(id => document.getElementById(id).addEventListener('change', refilter));
document.getElementById('prev').onclick = () => { query.offset = Math.max(0, query.offset - query.limit); loadRuns(); };
document.getElementById('next').onclick = () => {
  if (query.offset + query.limit < (query.matched ?? {{matched}})) { query.offset += query.limit; loadRuns(); }
};
function sweepEnded() {
  table.dataset.ended = 'true';
  document.getElementById('status').textContent = 'the sweep has ended: not polling';
}
if (table.dataset.ended === 'true') {
  sweepEnded();
} else {
  poll('/api/sweeps/{{sweep_id}}', d => {
    if (d.version !== table.dataset.version) {
      table.dataset.version = d.version;
      loadRuns();
    }
    loadFigures();  // 304 until the dashboard redraws them (a live sweep's curves grow between versions).
    if (d.ended) { sweepEnded(); return false; }
  }, 3000);
}
// The figures come from GET /api/sweeps/S/figures (built once per version of the sweep, report/figure_json.h)
// and are drawn by figures.js; a figure that appears later (a search view once two runs ended) gets its place.
let figuresEtag = '';
function figureBox(id) {
  let chart = document.getElementById('chart-' + id);
  if (chart) return chart;
  const box = document.createElement('div'); box.className = 'figure';
  chart = document.createElement('div'); chart.className = 'chart'; chart.id = 'chart-' + id;
  const link = document.createElement('a'); link.id = 'fig-' + id; link.textContent = 'SVG';
  link.href = '/sweeps/{{sweep_id}}/report/' + encodeURIComponent(id) + '.svg';
  const note = document.createElement('p'); note.className = 'static'; note.append('static: ', link);
  box.append(chart, note);
  document.getElementById('figures').appendChild(box);
  return chart;
}
function loadFigures() {
  const headers = figuresEtag ? {'If-None-Match': figuresEtag} : {};
  return fetch('/api/sweeps/{{sweep_id}}/figures', {credentials: 'same-origin', cache: 'no-store', headers: headers})
      .then(r => {
        if (r.status === 304) return null;
        if (!r.ok) return r.text().then(t => Promise.reject(t));
        figuresEtag = r.headers.get('ETag') || '';
        return r.json();
      })
      .then(doc => { if (doc) doc.figures.forEach(fig => NmFigures.draw(figureBox(fig.id), fig, doc.runs)); })
      .catch(e => { document.getElementById('status').textContent = 'figures: ' + e; });
}
window.addEventListener('load', loadFigures);  // After plotly.js and figures.js (the page's end).
</script>
)";

// Its own delimiter: the script may hold )" (kRun's text is JavaScript, not C++).
constexpr char kRun[] = R"nmrun(<h1>Run {{run_id}} <span id="state" class="{{state}}">{{state}}</span></h1>
<p>{{labels}}</p>
<div class="charts">{{#charts}}<div class="figure"><div class="chart" id="chart-{{.}}"></div></div>{{/charts}}</div>
<h2>Final metrics</h2>
<table id="finals"><thead><tr><th>metric</th><th class="num">value</th></tr></thead>
<tbody>{{#finals}}<tr><td>{{name}}</td><td class="num">{{text}}</td></tr>{{/finals}}</tbody></table>
<h2>State history</h2>
<table id="history"><thead><tr><th>attempt</th><th>state</th><th>at</th><th>reason</th></tr></thead><tbody></tbody></table>
<h2>Config</h2><pre id="config"></pre>
<h2>Logs</h2><pre id="logs"></pre>
<script src="/static/plotly.js{{asset_version}}"></script>
<script src="/static/figures.js{{asset_version}}"></script>
<script>
// Everything below comes from GET /api/runs/ID (GetRun with its metric points, the state history and the
// spec, plus the finals in nmctl's number format), re-read every 3 s until the run is final. Every text the
// run carries is set through textContent; the curves are figures of report/figure_json.h drawn by figures.js.
const runId = {{run_id}};
const lines = t => String(t).split('\n').map(visible).join('\n');  // Multi-line user text, made visible.
// Values by contract/metric_names.h's names: loss, lr, d (the decay D), sparsity/<location>, top1.
// The points of value KEY: the step lines when any carry it, else the epoch lines (a run without
// log_every_steps), in the order they were stored.
function pointsOf(metrics, key) {
  const of = kind => metrics.filter(p => p.kind === kind && p.values[key] !== undefined);
  const steps = of('step');
  return steps.length ? steps : of('epoch');
}
function attemptsOf(metrics) { return [...new Set(metrics.map(p => p.attempt))].sort((a, b) => a - b); }
// One series per value and attempt (named by its attempt when the run had MANY): after a resume, an attempt's curve starts at its checkpoint's step and
// may go over steps the attempt before it logged, so each attempt is its own line.
function series(metrics, keys, xOf, many, nameOf) {
  const out = [];
  keys.forEach(key => {
    const points = pointsOf(metrics, key);
    attemptsOf(points).forEach(attempt => {
      const mine = points.filter(p => p.attempt === attempt);
      const name = [nameOf ? nameOf(key) : 'run ' + runId, many ? 'attempt ' + attempt : '']
          .filter(Boolean).join(' \u00b7 ');
      out.push({name: name, style: 'lines', x: mine.map(xOf), y: mine.map(p => p.values[key]), err: [],
                run_ids: mine.map(() => runId), categories: []});
    });
  });
  return out;
}
// Where each attempt after the first began: a dashed line at its first point, named 'attempt N (resumed)'.
function resumeMarks(metrics, xOf) {
  return attemptsOf(metrics).slice(1).map(attempt => {
    const first = metrics.find(p => p.attempt === attempt);
    return {x: xOf(first), text: 'attempt ' + attempt + ' (resumed)'};
  });
}
const byStep = p => Number(p.step);
const byEpoch = p => p.epoch + 1;  // An epoch line carries the 0-based index of the epoch it ends.
const atEpoch = p => p.epoch;       // Where an attempt began: epochs done by then.
function figure(id, title, xLabel, yLabel, s, marks) {
  return {kind: 'xy', id: id, title: title, x_label: xLabel, y_label: yLabel, log_x: false, dimensions: [],
          run_ids: [], series: s, marks: marks};
}
function showRun(d) {
  const texts = d.final_texts || {};
  document.querySelector('#finals tbody').replaceChildren(...Object.keys(texts).sort().map(name => {
    const tr = document.createElement('tr'); tr.append(cell(name), cell(texts[name], 'num')); return tr;
  }));
  document.querySelector('#history tbody').replaceChildren(...(d.history || []).map(h => {
    const tr = document.createElement('tr');
    tr.append(cell(h.attempt || 0), cell(h.to, h.to), cell(new Date(Number(h.at_ms)).toISOString()), cell(h.reason || ''));
    return tr;
  }));
  document.getElementById('config').textContent = lines(d.run.resolved_spec || '');
}
function draw(d) {
  document.getElementById('state').textContent = d.run.state;
  document.getElementById('state').className = d.run.state;
  showRun(d);
  if (typeof NmFigures !== 'undefined') {
    const m = d.metrics.filter(p => p.kind === 'step' || p.kind === 'epoch');
    const names = [...new Set([].concat(...m.map(p => Object.keys(p.values))))];
    const sparsity = names.filter(n => n.startsWith('sparsity/')).sort();
    const runs = {}; runs[runId] = {name: 'run ' + runId, state: d.run.state};
    const stepMarks = resumeMarks(m, byStep), many = attemptsOf(m).length > 1;
    const charts = [
      ['loss', figure('run_loss', 'Train loss', 'step', 'train loss', series(m, ['loss'], byStep, many), stepMarks)],
      ['lr', figure('run_lr', 'Learning rate', 'step', 'lr', series(m, ['lr'], byStep, many), stepMarks)],
      ['d', figure('run_d', 'Decay D of pruned weights', 'step', 'D', series(m, ['d'], byStep, many), stepMarks)],
      ['sparsity', figure('run_sparsity', 'Sparsity', 'step', 'zero fraction',
                          series(m, sparsity, byStep, many, n => n.slice('sparsity/'.length)), stepMarks)],
      ['eval', figure('run_top1', 'Evaluation top1', 'epoch', 'top1',
                      series(m.filter(p => p.kind === 'epoch'), ['top1'], byEpoch, many), resumeMarks(m, atEpoch))]];
    charts.forEach(([id, fig]) => {
      const el = document.getElementById('chart-' + id);
      // A value the run does not log (D of a dense run) leaves its chart out rather than empty.
      el.parentElement.hidden = fig.series.length === 0;
      if (fig.series.length) NmFigures.draw(el, fig, runs);
    });
  }
  return !['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED_EARLY'].includes(d.run.state);
}
let logSeq = 0;
function appendLogs(d) {
  const pre = document.getElementById('logs');
  d.lines.forEach(l => { pre.textContent += visible(l.text) + '\n'; logSeq = l.seq + 1; });
}
fetch('/api/runs/' + runId).then(r => r.json()).then(d => { if (draw(d)) poll('/api/runs/' + runId, draw, 3000); });
const readLogs = () => fetch('/api/runs/' + runId + '/logs?from_seq=' + logSeq).then(r => r.json()).then(appendLogs);
readLogs(); setInterval(readLogs, 3000);
</script></body></html>
)nmrun";

constexpr char kLogin[] = R"(<h1>Sign in</h1><p>{{message}}</p>
<form method="post" action="/login"><label>token <input type="password" name="token" autocomplete="off"></label>
<button type="submit">sign in</button></form>
<p>A user or admin token (<code>nmserver token add NAME --role user</code>); it is kept in an HttpOnly cookie.</p>
</body></html>
)";

std::string Page(const std::string& body, mstch::map context) {
  return report::RenderHtml(std::string(kHead) + kPoll + body, context);
}

std::string Text(const Json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

std::string Joined(const Json& map) {
  std::vector<std::string> parts;
  std::map<std::string, std::string> sorted;
  for (auto it = map.begin(); it != map.end(); ++it) {
    sorted[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  }
  for (const auto& [k, v] : sorted) {
    parts.push_back(absl::StrCat(k, "=", v));
  }
  return absl::StrJoin(parts, " ");
}

// The query string of a link (RFC 3986's unreserved characters as they are, every other byte %XX).
std::string UrlEncoded(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppend(&out, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out;
}

// The run table's headers: the run's columns, then one per final metric; each a link that sorts by it
// (ascending, or descending when it is the ascending sort now), the sorted one marked.
mstch::array Columns(const Json& page) {
  std::vector<std::pair<std::string, std::string>> columns = {
      {"id", "run"}, {"labels", "labels"}, {"state", "state"}, {"attempt", "try"}};
  const size_t run_columns = columns.size();
  for (const Json& m : page.value("metrics", Json::array())) columns.emplace_back(m, m);
  const std::string sort = page.value("sort", std::string("id"));
  const bool desc = page.value("desc", false);
  mstch::array out;
  for (size_t i = 0; i < columns.size(); ++i) {
    const auto& [key, text] = columns[i];
    const bool sorted = key == sort;
    std::string href = "?sort=" + UrlEncoded(key);
    if (sorted && !desc) href += "&desc=1";
    out.push_back(mstch::map{{"sort", key},
                             {"text", sorted ? text + (desc ? " \u25bc" : " \u25b2") : text},
                             {"href", href},
                             {"aria", std::string(!sorted ? "none"
                                                  : desc  ? "descending"
                                                          : "ascending")},
                             {"class", std::string(i >= run_columns ? "num" : "")}});
  }
  return out;
}

}  // namespace

std::string SweepsPage(const Json& sweeps) {
  mstch::array rows;
  for (const Json& s : sweeps["sweeps"]) {
    rows.push_back(mstch::map{{"id", Text(s, "id")},
                              {"name", Text(s, "name")},
                              {"by", Text(s, "submitted_by").empty() ? "-" : Text(s, "submitted_by")},
                              {"counts", Joined(s["run_counts"])},
                              {"created", Text(s, "created_at_ms")}});
  }
  return Page(kSweeps, mstch::map{{"title", std::string("sweeps")}, {"sweeps", rows}});
}

std::string SweepPage(const Json& summary, const Json& page) {
  mstch::array runs, states;
  const Json metrics = page.value("metrics", Json::array());
  for (const Json& r : page["runs"]) {
    const Json texts = r.value("final_texts", Json::object());
    mstch::array cells;
    for (const Json& m : metrics) {
      const std::string name = m.get<std::string>();
      cells.push_back(texts.contains(name) ? Text(texts, name.c_str()) : std::string("-"));
    }
    runs.push_back(mstch::map{{"id", Text(r, "id")},
                              {"labels", Text(r, "labels")},
                              {"state", Text(r, "state")},
                              {"attempt", Text(r, "attempt")},
                              {"cells", cells}});
  }
  for (int s = v1::RunState_MIN + 1; s <= v1::RunState_MAX; ++s) {
    if (v1::RunState_IsValid(s)) states.push_back(v1::RunState_Name(static_cast<v1::RunState>(s)));
  }
  const Json& sweep = summary["sweep"];
  const std::string id = Text(sweep, "id");
  const int64_t matched = page.value("matched", int64_t{0}),
                shown = static_cast<int64_t>(page["runs"].size());
  const int64_t total = page.value("total", int64_t{0});
  std::string range = matched ? absl::StrCat("1-", shown, " of ", matched) : "0 of 0";
  if (matched != total) absl::StrAppend(&range, " (", total, " runs)");
  const std::string html =
      Page(kSweep, mstch::map{{"title", "sweep " + id},
                              {"sweep_id", id},
                              {"name", Text(sweep, "name")},
                              {"search_ended", Text(sweep, "search_ended")},
                              {"version", Text(summary, "version")},
                              {"ended", std::string(summary.value("ended", false) ? "true" : "false")},
                              {"matched", std::to_string(matched)},
                              {"range", range},
                              {"states", states},
                              {"columns", Columns(page)},
                              {"runs", runs}});
  // figures.js and plotly.js at the end; the figures' JSON comes later, from /api/sweeps/S/figures.
  return absl::StrCat(html,
                      report::FigureScripts(report::ScriptSafeJsonText(Json{{"figures", Json::array()}}),
                                            kStaticBase, report::AssetVersion()),
                      "</body></html>\n");
}

std::string RunPage(const Json& run) {
  const Json& r = run["run"];
  mstch::array finals, charts;
  const Json texts = run.value("final_texts", Json::object());
  for (auto it = texts.begin(); it != texts.end(); ++it) {
    finals.push_back(mstch::map{{"name", it.key()}, {"text", it->get<std::string>()}});
  }
  for (const char* chart : {"loss", "lr", "d", "sparsity", "eval"}) charts.push_back(std::string(chart));
  return Page(kRun, mstch::map{{"title", "run " + Text(r, "id")},
                               {"finals", finals},
                               {"charts", charts},
                               {"run_id", Text(r, "id")},
                               {"sweep_id", Text(r, "sweep_id")},
                               {"state", Text(r, "state")},
                               {"labels", Joined(r["labels"])},
                               {"asset_version", report::AssetVersion()}});
}

std::string LoginPage(const std::string& message) {
  return Page(kLogin, mstch::map{{"title", std::string("sign in")}, {"message", message}});
}

}  // namespace nmsparse::server
