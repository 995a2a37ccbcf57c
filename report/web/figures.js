// nmsparse's interactive figures (docs/dashboard.md): draws the figures of report/figure_json.h with
// plotly.js, the same code on the dashboard and in the HTML report. Hover shows a run's name and values in
// nmctl's number format; a legend click hides a series (double click isolates it); a click on a run's point or
// curve, the run chooser under parallel coordinates or a brush on their objective axis that keeps one run
// selects that run and highlights it in every figure of the page; the filter box keeps the runs whose name
// contains its text; runs that early stopping ended (STOPPED_EARLY) get a cross at their last point (of a
// curve, or of a run's points).
//
// Every user text is data. Plotly renders a subset of HTML in its texts (<b>, <br>, <a href>) and decodes
// entities, so each text is entity-escaped before Plotly sees it (and is shown literally); the page's own
// elements are filled through textContent only.
(function () {
  'use strict';

  // User text for Plotly: '&', '<', '>' as entities, which Plotly turns back into those characters.
  function esc(text) {
    return String(text === undefined || text === null ? '' : text)
        .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }

  // printf's %.Ng: N significant digits, trailing zeros dropped, exponent form outside [1e-4, 10^N).
  function significant(v, n) {
    if (v === 0) return '0';
    const strip = s => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
    const [mantissa, exponentText] = v.toExponential(n - 1).split('e');
    const exponent = Number(exponentText);
    if (exponent < -4 || exponent >= n) {
      const digits = String(Math.abs(exponent)).padStart(2, '0');
      return strip(mantissa) + 'e' + (exponent < 0 ? '-' : '+') + digits;
    }
    return strip(v.toFixed(Math.max(0, n - 1 - exponent)));
  }

  // nmctl's number format (common/metric_text.h: FormatMetric): 4 significant digits below 1000, whole
  // numbers below 100,000, then 3 significant digits with an SI prefix (42.9G).
  function formatMetric(v) {
    if (v === null || v === undefined) return '-';
    if (Number.isNaN(v)) return 'nan';
    if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
    const magnitude = Math.abs(v);
    if (magnitude >= 1e5) {
      const prefixes = ['k', 'M', 'G', 'T', 'P', 'E'];
      let prefix = -1, scaled = v;
      while (Math.abs(scaled) >= 999.5 && prefix + 1 < prefixes.length) { scaled /= 1000; ++prefix; }
      return Math.abs(scaled) < 999.5 ? significant(scaled, 3) + prefixes[prefix] : significant(v, 3);
    }
    if (magnitude >= 1000) return v.toFixed(0);
    return significant(v, 4);
  }

  const state = {filter: '', selected: null, pages: []};  // pages: [{el, fig, runs}]

  function runName(runs, id) { return runs[id] ? runs[id].name : 'run ' + id; }
  function kept(runs, id) {
    return id === undefined || state.filter === '' ||
        runName(runs, id).toLowerCase().includes(state.filter.toLowerCase());
  }

  // The indices of a series' points that the filter keeps (points without a run always stay).
  function keptPoints(s, runs) {
    const out = [];
    for (let i = 0; i < s.x.length; ++i) if (kept(runs, s.run_ids[i])) out.push(i);
    return out;
  }

  function hoverText(fig, s, i, runs) {
    const id = s.run_ids[i];
    const head = id !== undefined ? esc(runName(runs, id)) : esc(s.name);
    const x = s.categories.length > i ? esc(s.categories[i]) : formatMetric(s.x[i]);  // Bars, categorical slices.
    let text = head + '<br>' + esc(fig.x_label) + ': ' + x + '<br>' + esc(fig.y_label) + ': ' + formatMetric(s.y[i]);
    if (s.err.length > i && s.err[i] !== null) text += ' \u00b1 ' + formatMetric(s.err[i]);
    return text;
  }

  // Plotly's own colour cycle, so that series without a group look as they always did.
  const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
                   '#bcbd22', '#17becf'];
  const DASHES = ['solid', 'dash', 'dot', 'dashdot', 'longdash', 'longdashdot'];

  // Each series' colour and dash: the series of one group (a recipe) share its colour and take dashes in
  // turn (a hidden run's line keeps its band's look); a series without a group a colour of its own.
  function looks(fig) {
    const groups = new Map();
    let colors = 0;
    return fig.series.map(s => {
      if (!s.group) return {color: PALETTE[colors++ % PALETTE.length], dash: 'solid'};
      if (!groups.has(s.group)) groups.set(s.group, {color: PALETTE[colors++ % PALETTE.length], shown: 0});
      const g = groups.get(s.group);
      return {color: g.color, dash: s.hidden ? 'solid' : DASHES[g.shown++ % DASHES.length]};
    });
  }

  // '#1f77b4' at `alpha` as rgba(), for a band's fill.
  function translucent(hex, alpha) {
    const n = parseInt(hex.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + alpha + ')';
  }

  function xyTraces(fig, runs) {
    const traces = [], stopped = {x: [], y: [], text: [], customdata: []};
    const look = looks(fig), legendGroups = new Set();
    fig.series.forEach((s, k) => {
      const at = keptPoints(s, runs);
      if (at.length === 0) return;
      const pick = a => at.map(i => a[i]);
      const ids = s.run_ids.length ? pick(s.run_ids) : [];
      const oneRun = ids.length > 0 && ids.every(id => id === ids[0]) && s.style === 'lines';
      const dim = state.selected !== null && !ids.includes(state.selected);
      const t = {name: esc(s.name), x: pick(s.x), y: pick(s.y), customdata: ids,
                 text: at.map(i => hoverText(fig, s, i, runs)), hoverinfo: 'text', opacity: dim ? 0.25 : 1};
      const color = look[k].color;
      if (s.style === 'band') {
        // The ± std band (no legend entry, no hover) under its mean line.
        const xs = pick(s.x), lo = at.map(i => s.y[i] - (s.err[i] || 0)), hi = at.map(i => s.y[i] + (s.err[i] || 0));
        traces.push({type: 'scatter', mode: 'lines', x: xs.concat(xs.slice().reverse()), y: hi.concat(lo.reverse()),
                     fill: 'toself', fillcolor: translucent(color, 0.2), line: {width: 0}, hoverinfo: 'skip',
                     showlegend: false, legendgroup: s.name, opacity: t.opacity});
        Object.assign(t, {type: 'scatter', mode: at.length === 1 ? 'markers' : 'lines', legendgroup: s.name,
                          line: {color: color, dash: look[k].dash, width: 2.5}, marker: {color: color, size: 8}});
        traces.push(t);
        return;
      }
      if (s.hidden) {
        // A run behind its configuration's band: one legend entry for all of them, off until clicked.
        Object.assign(t, {type: 'scatter', mode: 'lines', visible: 'legendonly', name: esc(s.legend_group),
                          legendgroup: s.legend_group, showlegend: !legendGroups.has(s.legend_group),
                          line: {color: color, width: 1}});
        legendGroups.add(s.legend_group);
        traces.push(t);
        return;
      }
      if (s.style === 'bars') {
        Object.assign(t, {type: 'bar', textposition: 'none', x: at.map(i => esc(s.categories[i]))});
      } else if (s.style === 'points') {
        Object.assign(t, {type: 'scatter', mode: 'markers', opacity: 1, marker: {color: color,
          size: ids.map(id => (id === state.selected ? 15 : 9)),
          opacity: ids.length ? ids.map(id => (state.selected === null || id === state.selected ? 1 : 0.3)) : 1,
          line: {width: ids.map(id => (id === state.selected ? 2 : 0)), color: 'black'}}});
        if (s.err.length) t.error_y = {type: 'data', array: pick(s.err), visible: true, color: color};
      } else if (s.style === 'front') {
        // A ring on each member too: a front of one run has no step to draw.
        Object.assign(t, {type: 'scatter', mode: 'lines+markers', line: {shape: 'hv', dash: 'dash', color: 'black', width: 2},
                          marker: {symbol: 'circle-open', size: 14, color: 'black'}});
      } else {
        // Curves: a run of one point (a one-epoch sweep) is a marker, not an invisible line.
        const selected = oneRun && ids[0] === state.selected;
        Object.assign(t, {type: 'scatter', mode: at.length === 1 ? 'markers' : 'lines+markers',
                          line: {width: selected ? 4 : 2, color: color, dash: look[k].dash},
                          marker: {size: at.length === 1 ? 10 : 4, color: color}});
        if (s.style === 'errorbars') t.error_y = {type: 'data', array: pick(s.err), visible: true};
      }
      traces.push(t);
      // Early stopping's cross at the last point of each stopped run: its curve's, or its last in a series of
      // points per run (top-1 vs FLOPs, a slice).
      if (!oneRun && s.style !== 'points') return;
      const last = new Map();
      at.forEach(i => last.set(s.run_ids[i], i));
      last.forEach((i, id) => {
        if (!runs[id] || runs[id].state !== 'STOPPED_EARLY') return;
        stopped.x.push(s.x[i]); stopped.y.push(s.y[i]); stopped.customdata.push(id);
        stopped.text.push(hoverText(fig, s, i, runs) + '<br>stopped early');
      });
    });
    if (stopped.x.length) {
      traces.push(Object.assign(stopped, {name: 'stopped early', type: 'scatter', mode: 'markers', hoverinfo: 'text',
          marker: {symbol: 'x-thin-open', size: 14, color: '#a31515', line: {width: 3, color: '#a31515'}}}));
    }
    return traces;
  }

  // Parallel coordinates (Plotly's parcoords has no click events): lines coloured by the objective; with a
  // run selected, its line red and drawn last (on top), the others grey. A brush on the objective axis that
  // keeps one run selects it; the run chooser under the figure selects any (runChooser).
  function parallelTrace(page) {
    const {el, fig, runs} = page;
    const at = fig.run_ids.map((_, i) => i).filter(i => kept(runs, fig.run_ids[i]));
    const order = at.filter(i => fig.run_ids[i] !== state.selected)
                      .concat(at.filter(i => fig.run_ids[i] === state.selected));
    const before = el.data && el.data[0] && el.data[0].dimensions ? el.data[0].dimensions : [];
    const dims = fig.dimensions.map((d, k) => {
      const values = order.map(i => (d.values[i] === null ? NaN : d.log ? Math.log10(d.values[i]) : d.values[i]));
      const out = {label: esc(d.label + (d.log ? ' (log10)' : '')), values: values};
      if (d.categories.length) {
        out.tickvals = d.categories.map((_, i) => i);
        // Plotly writes parallel-coordinates tick texts as plain text (no entity decoding): not escaped.
        out.ticktext = d.categories.map(String);
      } else if (d.ticks && d.ticks.length) {
        // A discrete axis (a grid's numbers, a short integer range): a tick at each value it takes, no other.
        out.tickvals = d.ticks.map(v => (d.log ? Math.log10(v) : v));
        out.ticktext = d.ticks.map(formatMetric);
      }
      if (before[k] && before[k].constraintrange) out.constraintrange = before[k].constraintrange;  // Kept brush.
      return out;
    });
    page.order = order.map(i => fig.run_ids[i]);
    const anySelected = page.order.includes(state.selected);
    const line = anySelected ?
        {color: page.order.map(id => (id === state.selected ? 1 : 0)), cmin: 0, cmax: 1, showscale: false,
         colorscale: [[0, '#c8c8c8'], [1, '#a31515']]} :
        {color: dims.length ? dims[dims.length - 1].values : [], colorscale: 'Viridis', showscale: true};
    runChooser(page);
    return [{type: 'parcoords', dimensions: dims, line: line}];
  }

  // The runs of the objective's brushed range (a range or a list of ranges), in page.order.
  function brushedRuns(page) {
    const dims = page.el.data && page.el.data[0] ? page.el.data[0].dimensions : [];
    const objective = dims[dims.length - 1];
    if (!objective || !objective.constraintrange) return null;
    const ranges = Array.isArray(objective.constraintrange[0]) ? objective.constraintrange : [objective.constraintrange];
    return page.order.filter((_, i) => ranges.some(([lo, hi]) => objective.values[i] >= lo && objective.values[i] <= hi));
  }

  // A <select> of the figure's runs (those the filter keeps) under it, showing and setting the selected run.
  function runChooser(page) {
    if (!page.chooser) {
      const label = document.createElement('label');
      label.className = 'nm-run-chooser';
      label.textContent = 'select a run ';
      const chooser = document.createElement('select');
      chooser.addEventListener('change', () => select(chooser.value === '' ? null : Number(chooser.value)));
      label.appendChild(chooser);
      page.el.insertAdjacentElement('afterend', label);
      page.chooser = chooser;
    }
    const {fig, runs} = page;
    const objective = fig.dimensions.length ? fig.dimensions[fig.dimensions.length - 1] : null;
    const options = [['', 'none']];
    fig.run_ids.forEach((id, i) => {
      if (!kept(runs, id)) return;
      const value = objective ? ': ' + formatMetric(objective.values[i]) : '';
      options.push([String(id), runName(runs, id) + value]);
    });
    page.chooser.replaceChildren(...options.map(([value, text]) => {
      const option = document.createElement('option');
      option.value = value; option.textContent = text;
      return option;
    }));
    page.chooser.value = options.some(([value]) => value === String(state.selected)) ? String(state.selected) : '';
  }

  function layout(fig) {
    const axis = title => ({title: {text: esc(title)}, automargin: true, exponentformat: 'SI'});
    // The title on the left, clear of the mode bar (top right).
    const out = {title: {text: esc(fig.title), x: 0.02, xanchor: 'left'}, font: {size: 14}, height: 440, hovermode: 'closest',
                 margin: {t: 50, l: 60, r: 20, b: 40}, showlegend: true,
                 legend: {orientation: 'h', y: -0.25}, xaxis: axis(fig.x_label), yaxis: axis(fig.y_label)};
    if (fig.kind === 'parallel') out.margin = {t: 100, l: 90, r: 40, b: 30};  // Room for category labels.
    // One tick per decade on a log axis that spans decades (a narrower one keeps Plotly's ticks, or it would
    // have none); one per whole number on a short whole-number axis (epochs).
    const xs = [].concat(...fig.series.filter(s => s.style !== 'bars').map(s => s.x)).filter(x => x !== null);
    if (fig.log_x) {
      const positive = xs.filter(x => x > 0);
      const decades = positive.length ? Math.log10(Math.max(...positive) / Math.min(...positive)) : 0;
      Object.assign(out.xaxis, decades >= 1 ? {type: 'log', dtick: 1} : {type: 'log'});
    }
    if (!fig.log_x && xs.length && xs.every(Number.isInteger) && Math.max(...xs) - Math.min(...xs) <= 20) {
      Object.assign(out.xaxis, {dtick: 1, tick0: 0});
    }
    // Marks on the x axis (where a run resumed): a dashed vertical line with its text at the top.
    const marks = fig.marks || [];
    out.shapes = marks.map(m => ({type: 'line', xref: 'x', yref: 'paper', x0: m.x, x1: m.x, y0: 0, y1: 1,
                                  line: {color: '#a31515', width: 1.5, dash: 'dash'}}));
    out.annotations = marks.map(m => ({xref: 'x', yref: 'paper', x: m.x, y: 1, yanchor: 'top',
                                       xanchor: 'left', text: esc(m.text), showarrow: false,
                                       font: {size: 11, color: '#a31515'}}));
    // Points whose x is a category's place (a slice over a categorical parameter): the names on the axis.
    const named = new Map();
    fig.series.filter(s => s.style !== 'bars').forEach(s => s.categories.forEach((c, i) => named.set(s.x[i], c)));
    if (named.size) {
      const at = [...named.keys()].sort((a, b) => a - b);
      Object.assign(out.xaxis, {tickmode: 'array', tickvals: at, ticktext: at.map(v => esc(named.get(v)))});
    }
    return out;
  }

  function config(fig) {
    return {responsive: true, displaylogo: false,
            toImageButtonOptions: {format: 'svg', filename: fig.id, width: 900, height: 560}};
  }

  function render(page) {
    const {el, fig, runs} = page;
    const traces = fig.kind === 'parallel' ? parallelTrace(page) : xyTraces(fig, runs);
    el.dataset.traces = traces.length;  // What a test reads from the DOM.
    el.dataset.points = traces.reduce((n, t) => n + (t.x ? t.x.length : 0), 0);
    el.dataset.marks = (fig.marks || []).length;
    return Plotly.react(el, traces, layout(fig), config(fig));
  }

  function select(id) {
    state.selected = id === state.selected ? null : id;
    const shown = document.getElementById('nm-selected');
    if (shown) {
      const any = state.pages.find(p => p.runs[state.selected]);
      shown.textContent = state.selected === null ? 'none' :
          (any ? runName(any.runs, state.selected) : 'run ' + state.selected);
    }
    state.pages.forEach(render);
  }

  // Draws FIG into EL and keeps it in the page's selection and filter; drawing the same EL again (a polled
  // page) replaces its figure.
  function draw(el, fig, runs) {
    let page = state.pages.find(p => p.el === el);
    if (page) {
      Object.assign(page, {fig: fig, runs: runs || {}});
    } else {
      page = {el: el, fig: fig, runs: runs || {}};
      state.pages.push(page);
    }
    return render(page).then(() => {
      if (el.dataset.bound) return;
      el.dataset.bound = '1';
      el.on('plotly_click', e => {
        const point = e.points && e.points[0];
        if (point && point.customdata !== undefined && point.customdata !== null) select(point.customdata);
      });
      if (fig.kind !== 'parallel') return;
      el.on('plotly_restyle', () => {
        const inRange = brushedRuns(page);
        if (inRange && inRange.length === 1 && inRange[0] !== state.selected) select(inRange[0]);
      });
    });
  }

  // The filter box and the selected run, built with textContent.
  function controls(parent) {
    const label = document.createElement('label');
    label.textContent = 'filter runs by name ';
    const input = document.createElement('input');
    input.type = 'search'; input.id = 'nm-filter'; input.placeholder = 'e.g. recipe=srste';
    input.addEventListener('input', () => { state.filter = input.value; state.pages.forEach(render); });
    label.appendChild(input);
    const selected = document.createElement('span');
    selected.textContent = ' selected run: ';
    const name = document.createElement('b');
    name.id = 'nm-selected'; name.textContent = 'none';
    const clear = document.createElement('button');
    clear.type = 'button'; clear.textContent = 'clear';
    clear.addEventListener('click', () => { state.selected = null; select(null); });
    selected.append(name, ' ', clear);
    parent.replaceChildren(label, selected);
  }

  // The page's figures: the JSON in <script id="nm-figures" type="application/json">, each drawn into the
  // element with id "chart-" + its id.
  function init() {
    const data = document.getElementById('nm-figures');
    const bar = document.getElementById('nm-figure-controls');
    if (bar) controls(bar);
    if (!data || typeof Plotly === 'undefined') return;
    const doc = JSON.parse(data.textContent);
    doc.figures.forEach(fig => {
      const el = document.getElementById('chart-' + fig.id);
      if (el) draw(el, fig, doc.runs);
    });
  }

  window.NmFigures = {draw: draw, init: init, formatMetric: formatMetric, escape: esc};
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init); else init();
})();
