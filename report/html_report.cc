#include "report/html_report.h"

#include <cmath>
#include <mstch/mstch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "report/compare_pivot.h"
#include "report/figure_json.h"
#include "report/figures.h"
#include "report/gnuplot_svg.h"
#include "report/html_page.h"
#include "report/paper_table.h"
#include "report/run_facts.h"
#include "report/svg_pdf.h"
#include "report/web_assets.h"
#include "schemas/recipe.h"

namespace nmsparse::report {
namespace {

// Inline CSS; the figures drawn in the browser by figures.js with plotly.js (web_assets.h) from the JSON the
// page ends with, each with its static SVG (gnuplot) beside it for papers. Rendered by RenderHtml
// (report/html_page.h): {{x}} is visible text, HTML-escaped.
constexpr char kTemplate[] = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>nmsparse sweep {{sweep_id}} {{sweep_name}}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1100px; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 4px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { margin: 2em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { color: #555; font-size: 90%; } .chart { min-height: 440px; }
#nm-figure-controls { position: sticky; top: 0; background: #fff; padding: 6px 0; z-index: 10; }
</style></head>
<body>
<h1>Sweep {{sweep_id}}: {{sweep_name}}</h1>
<p id="summary">{{run_count}} runs ({{state_summary}}); final metric <b>{{metric}}</b>; created {{created}}.</p>
<h2 id="table">{{metric}}{{#percent}} (%){{/percent}} by {{row_axis}}{{#column_axis}} &times; {{column_axis}}{{/column_axis}}{{#pooled}}, pooled over {{pooled}}{{/pooled}}</h2>
<p>Mean over the succeeded runs of a cell; &plusmn; sample standard deviation (n runs) where several share it
(seeds, random draws), as <code>nmctl compare</code> shows it.</p>
<table class="pivot">
<tr><th>{{row_axis}}</th>{{#columns}}<th>{{.}}</th>{{/columns}}</tr>
{{#rows}}<tr><td>{{label}}</td>{{#cells}}<td>{{.}}</td>{{/cells}}</tr>
{{/rows}}</table>
<h2>Figures</h2>
<p>Hover for a run's values; click a legend entry to hide it (double click: only it); click a run's point or
curve (or choose it under the parallel coordinates) to highlight that run in every figure. The camera icon
saves a figure as SVG; the links under each are the static gnuplot files.</p>
<div id="nm-figure-controls"></div>
{{#figures}}<figure id="{{id}}"><div class="chart" id="chart-{{id}}"></div>
<noscript><img src="{{id}}.svg" alt="{{title}}"></noscript>
<figcaption>{{title}}. {{caption}} Static: <a href="{{id}}.svg">SVG</a>{{#pdf}}, <a href="{{id}}.pdf">PDF</a>{{/pdf}}.</figcaption></figure>
{{/figures}}
<h2 id="runs">Runs</h2>
<table class="runs">
<tr><th>run</th><th>state</th><th>recipe</th><th>N/M</th><th>{{metric}}</th>{{#counterparts}}<th>{{.}}</th>{{/counterparts}}<th>training FLOPs</th>
<th>inference FLOPs / image</th><th>parameters</th></tr>
{{#runs}}<tr><td>{{name}}</td><td>{{state}}</td><td>{{recipe}}</td><td>{{density}}</td><td>{{value}}</td>{{#beside}}<td>{{.}}</td>{{/beside}}
<td>{{train_flops}}</td><td>{{inference_flops}}</td><td>{{params}}</td></tr>
{{/runs}}</table>
{{#legend}}<p>{{.}}</p>
{{/legend}})";

std::string Number(double v, const char* format) {
  return std::isfinite(v) ? absl::StrFormat(format, v) : std::string("-");
}

std::string StateSummary(const v1::Sweep& sweep) {
  std::string out;
  for (const auto& [state, n] :
       std::map<std::string, uint32_t>(sweep.run_counts().begin(), sweep.run_counts().end())) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", n, " ", state);
  }
  return out.empty() ? "none yet" : out;
}

// nmctl compare's table (report/paper_table.h): the same headers and cells, with the EMA's and the
// deployable model's columns.
mstch::map PivotContext(const SweepData& data, const std::string& metric) {
  std::vector<v1::Run> runs;
  for (const RunData& r : data.runs) runs.push_back(r.run);
  // As nmctl compare: top-1 is the deployable model's where runs report it.
  const std::string table_metric = PaperTableMetric(runs, metric);
  // Where runs stopped early left off, as nmctl compare shows them.
  const ComparePivot pivot =
      BuildComparePivot(data.sweep.spec(), runs, table_metric, StoppedRunValues(data, table_metric));
  PaperTableOptions options;
  options.beside = CounterpartPivots(data.sweep.spec(), runs, Counterparts(runs, table_metric));
  const PaperTable table = *BuildPaperTable(pivot, options);  // Fails only for a missing delta row.
  mstch::array columns, rows;
  for (const PaperColumn& c : table.columns) columns.push_back(ColumnHeaderText(table, c));
  for (size_t r = 0; r < table.row_labels.size(); ++r) {
    mstch::array cells;
    for (size_t c = 0; c < table.columns.size(); ++c) {
      cells.push_back(NumberText(table, table.columns[c], table.cells[r][c]));
    }
    rows.push_back(mstch::map{{"label", table.row_labels[r]}, {"cells", cells}});
  }
  mstch::map out{
      {"row_axis", table.row_header}, {"columns", columns}, {"rows", rows}, {"percent", table.percent}};
  if (!pivot.column_axis.empty()) {
    out.emplace("column_axis", pivot.column_headers != pivot.column_labels ? "N:M" : pivot.column_axis);
  }
  const std::vector<std::string> replicates = ReplicateGridAxes(data.sweep.spec());
  if (!replicates.empty()) out.emplace("pooled", absl::StrJoin(replicates, ", "));
  return out;
}

// `counterparts`: of `metric` (Counterparts: the model EMA's, the deployable model's), a column each.
mstch::array RunsContext(const SweepData& data, const std::string& metric,
                         const std::vector<Counterpart>& counterparts) {
  mstch::array out;
  for (const RunData& r : data.runs) {
    const SparsityConfig s = RunSparsity(r.run);
    mstch::array beside;  // One cell per counterpart column.
    for (const Counterpart& c : counterparts) beside.push_back(Number(FinalMetric(r.run, c.metric), "%.4g"));
    out.push_back(mstch::map{{"name", RunName(r.run)},
                             {"beside", beside},
                             {"state", v1::RunState_Name(r.run.state())},
                             {"recipe", RecipeOf(s)},
                             {"density", Number(DensityOf(s), "%.3g")},
                             {"value", Number(FinalMetric(r.run, metric), "%.4g")},
                             {"train_flops", Number(TrainingFlops(r.run), "%.3g")},
                             {"inference_flops", Number(InferenceFlops(r.run), "%.3g")},
                             {"params", Number(ReportedParameters(r.run), "%.0f")}});
  }
  return out;
}

}  // namespace

std::string ReportHtml(const SweepData& data, const std::string& metric, const ReportOptions& options) {
  return ReportHtml(data, metric, SweepFigures(data, metric), options);
}

std::string ReportHtml(const SweepData& data, const std::string& metric,
                       const std::vector<Figure>& sweep_figures, const ReportOptions& options) {
  mstch::array figures;
  for (const Figure& f : sweep_figures) {
    figures.push_back(
        mstch::map{{"id", f.id}, {"title", f.title}, {"caption", f.caption}, {"pdf", options.pdf}});
  }
  mstch::map context = PivotContext(data, metric);
  context.emplace("sweep_id", std::to_string(data.sweep.id()));
  context.emplace("sweep_name", data.sweep.name());
  context.emplace("run_count", std::to_string(data.runs.size()));
  context.emplace("state_summary", StateSummary(data.sweep));
  context.emplace("metric", metric);
  context.emplace("created",
                  absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::FromUnixMillis(data.sweep.created_at_ms()),
                                   absl::UTCTimeZone()));
  context.emplace("figures", figures);
  std::vector<v1::Run> runs;
  for (const RunData& r : data.runs) runs.push_back(r.run);
  const std::vector<Counterpart> counterparts = Counterparts(runs, metric);
  mstch::array headers, legend;
  for (const Counterpart& c : counterparts) headers.push_back(c.metric);
  if (std::string text = DeployableLegend(metric, counterparts); !text.empty()) legend.push_back(text);
  context.emplace("counterparts", headers);
  context.emplace("legend", legend);
  context.emplace("runs", RunsContext(data, metric, counterparts));
  // The figures' JSON is not template text (mstch would HTML-escape it, which a <script> does not undo).
  return absl::StrCat(RenderHtml(kTemplate, context),
                      FigureScripts(ScriptSafeJsonText(FiguresDocument(sweep_figures, data)),
                                    options.script_base, options.script_query),
                      "</body></html>\n");
}

absl::StatusOr<ReportFiles> BuildReport(const SweepData& data, const std::string& metric,
                                        const ReportOptions& options) {
  ReportFiles out;
  NM_ASSIGN_OR_RETURN(std::string plotly, ReadPlotlyJs(options.plotly_js_path));
  out.files["plotly.js"] = std::move(plotly);
  out.files["figures.js"] = FiguresJs();
  out.files["index.html"] = ReportHtml(data, metric, options);
  for (const Figure& f : SweepFigures(data, metric)) {
    absl::StatusOr<std::string> svg = RenderSvg(f);
    if (svg.ok() && options.pdf) {
      absl::StatusOr<std::string> pdf = SvgToPdf(*svg);
      if (!pdf.ok())
        return absl::Status(pdf.status().code(), absl::StrCat("figure ", f.id, ": ", pdf.status().message()));
      out.files[f.id + ".pdf"] = std::move(*pdf);
    }
    if (!svg.ok()) {
      return absl::Status(svg.status().code(),
                          absl::StrCat("sweep ", data.sweep.id(), ": ", svg.status().message()));
    }
    out.files[f.id + ".svg"] = std::move(*svg);
  }
  return out;
}

}  // namespace nmsparse::report
