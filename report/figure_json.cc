#include "report/figure_json.h"

#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/visible_text.h"
#include "report/figures.h"
#include "report/svg_text_placeholders.h"

namespace nmsparse::report {
namespace {

// The same bound on a text as the SVG figures (a legend entry past it is cut, marked).
Json Text(const std::string& text) { return VisibleText(text, kMaxFigureTextChars); }

Json Numbers(const std::vector<double>& values) {
  Json out = Json::array();
  for (double v : values) out.push_back(std::isfinite(v) ? Json(v) : Json(nullptr));
  return out;
}

Json Ids(const std::vector<int64_t>& ids) {
  Json out = Json::array();
  for (int64_t id : ids) out.push_back(id);
  return out;
}

Json Texts(const std::vector<std::string>& texts) {
  Json out = Json::array();
  for (const std::string& t : texts) out.push_back(Text(t));
  return out;
}

const char* StyleName(Series::Style style) {
  switch (style) {
    case Series::Style::kPoints:
      return "points";
    case Series::Style::kErrorBars:
      return "errorbars";
    case Series::Style::kFront:
      return "front";
    case Series::Style::kBars:
      return "bars";
    case Series::Style::kBand:
      return "band";
    case Series::Style::kLines:
      break;
  }
  return "lines";
}

Json SeriesJson(const Series& s) {
  return Json{{"name", Text(s.name)},
              {"style", StyleName(s.style)},
              {"x", Numbers(s.x)},
              {"y", Numbers(s.y)},
              {"err", Numbers(s.err)},
              {"run_ids", Ids(s.run_ids)},
              {"categories", Texts(s.categories)},
              {"group", Text(s.group)},
              {"hidden", s.hidden},
              {"legend_group", Text(s.legend_group)}};
}

Json DimensionJson(const Dimension& d) {
  return Json{{"label", Text(d.label)},
              {"log", d.log},
              {"values", Numbers(d.values)},
              {"categories", Texts(d.categories)},
              {"ticks", Numbers(d.ticks)}};
}

}  // namespace

Json FigureJson(const Figure& f) {
  Json out{{"kind", f.kind == Figure::Kind::kParallelCoordinates ? "parallel" : "xy"},
           {"id", f.id},
           {"title", Text(f.title)},
           {"caption", Text(f.caption)},
           {"x_label", Text(f.x_label)},
           {"y_label", Text(f.y_label)},
           {"log_x", f.log_x},
           {"series", Json::array()},
           {"dimensions", Json::array()},
           {"run_ids", Ids(f.run_ids)}};
  for (const Series& s : f.series) out["series"].push_back(SeriesJson(s));
  for (const Dimension& d : f.dimensions) out["dimensions"].push_back(DimensionJson(d));
  return out;
}

Json FiguresDocument(const std::vector<Figure>& figures, const SweepData& data) {
  Json out{{"figures", Json::array()}, {"runs", Json::object()}};
  for (const Figure& f : figures) out["figures"].push_back(FigureJson(f));
  // Appended without a lookup: an ordered_json object finds a key by scanning its keys, which made 50,000
  // runs cost 50,000^2 / 2 string compares (5 s of a first dashboard figure). Run ids are unique.
  // Only the runs the figures show (a large sweep's figures show a chosen set: run_marks_cap.h).
  absl::flat_hash_set<int64_t> shown;
  for (const Figure& f : figures) {
    shown.insert(f.run_ids.begin(), f.run_ids.end());
    for (const Series& s : f.series) shown.insert(s.run_ids.begin(), s.run_ids.end());
  }
  auto& runs = *out["runs"].get_ptr<Json::object_t*>();
  runs.reserve(shown.size());
  for (const RunData& r : data.runs) {
    if (!shown.contains(r.run.id())) continue;
    runs.push_back({absl::StrCat(r.run.id()),
                    Json{{"name", Text(RunName(r.run))}, {"state", v1::RunState_Name(r.run.state())}}});
  }
  return out;
}

std::string ScriptSafeJsonText(const Json& json) {
  // Outside its strings the text is ASCII without these characters, so each stands inside a string, where
  // the escape means the same character.
  std::string out;
  for (char c : ToJsonText(json, /*pretty=*/false)) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace nmsparse::report
