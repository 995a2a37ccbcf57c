#include "server/api/export.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/safe_json.h"
#include "common/visible_text.h"
#include "contract/metric_line.h"
#include "schemas/json_string.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse::server {
namespace {

std::string Number(double v) {
  if (!std::isfinite(v)) return "";
  return absl::StrFormat("%.10g", v);
}

std::string JsonNumber(double v) { return std::isfinite(v) ? absl::StrFormat("%.10g", v) : "null"; }

// Label columns in first-seen axis order; metric columns sorted.
std::vector<std::string> LabelColumns(const std::vector<ExportRun>& runs) {
  std::vector<std::string> cols;
  for (const ExportRun& r : runs) {
    for (const std::string& name : r.label_order) {
      if (std::find(cols.begin(), cols.end(), name) == cols.end()) cols.push_back(name);
    }
  }
  return cols;
}

// The run's spec as key paths ("optimizer.lr" -> "0.002"): every scalar key of its canonical YAML, swept or
// not, so that a CSV row carries the config it ran with (N, lr, decay_coef ...). Lists (phases, dynamic
// groups) are left to the JSON export's spec.
void FlattenSpec(const YAML::Node& node, const std::string& prefix, std::map<std::string, std::string>* out) {
  for (const auto& kv : node) {
    const std::string key = prefix + kv.first.Scalar();
    if (kv.second.IsMap()) {
      FlattenSpec(kv.second, key + ".", out);
    } else if (kv.second.IsScalar()) {
      (*out)[key] = CsvField(kv.second.Scalar());
    }
  }
}

std::map<std::string, std::string> ConfigOf(const ExportRun& r) {
  std::map<std::string, std::string> config;
  if (r.run.resolved_spec().empty()) return config;
  try {  // Canonical YAML as stored; a text that does not load leaves the row without its config.
    const YAML::Node spec = YAML::Load(r.run.resolved_spec());
    if (spec.IsMap()) FlattenSpec(spec, "", &config);
  } catch (const YAML::Exception&) {
  }
  return config;
}

// The zero values of a flattened field: what every key of a spec that does not use it holds.
bool IsZeroValue(const std::string& value) {
  return value.empty() || value == "0" || value == "false" || absl::EndsWith(value, "_UNSPECIFIED");
}

// "optimizer.lr", ...: the runs' spec keys, sorted, less those at their zero value in every run (keys no run
// uses, such as another model family's).
std::vector<std::string> ConfigColumns(const std::vector<ExportRun>& runs) {
  std::set<std::string> cols;
  for (const ExportRun& r : runs) {
    for (const auto& [k, v] : ConfigOf(r)) {
      if (!IsZeroValue(v)) cols.insert(k);
    }
  }
  return {cols.begin(), cols.end()};
}

std::vector<std::string> FinalColumns(const std::vector<ExportRun>& runs) {
  std::set<std::string> cols;
  for (const ExportRun& r : runs) {
    for (const auto& [k, v] : r.run.final_metrics()) cols.insert(k);
  }
  return {cols.begin(), cols.end()};
}

std::vector<std::string> CurveColumns(const std::vector<ExportRun>& runs) {
  std::set<std::string> cols;
  for (const ExportRun& r : runs) {
    for (const v1::MetricPoint& p : r.curve) {
      for (const auto& [k, v] : p.values()) cols.insert(k);
      for (const auto& [k, v] : p.labels()) cols.insert(k);
    }
  }
  return {cols.begin(), cols.end()};
}

std::vector<std::string> RunFields(const ExportRun& r, const std::vector<std::string>& labels,
                                   const std::vector<std::string>& config_columns) {
  std::vector<std::string> f = {absl::StrCat(r.run.id()), absl::StrCat(r.run.index())};
  for (const std::string& l : labels) {
    auto it = r.run.labels().find(l);
    f.push_back(CsvField(it == r.run.labels().end() ? "" : it->second));
  }
  f.push_back(v1::RunState_Name(r.run.state()));
  const std::map<std::string, std::string> config = ConfigOf(r);
  for (const std::string& c : config_columns) {
    auto it = config.find(c);
    f.push_back(it == config.end() ? "" : it->second);
  }
  return f;
}

// The epoch a final point belongs to: the trainer writes its final line without one (0), after the last
// epoch line of the same attempt.
uint32_t PointEpoch(const ExportRun& r, const v1::MetricPoint& p) {
  if (p.kind() != contract::kKindFinal || p.epoch() != 0) return p.epoch();
  uint32_t last = 0;
  for (const v1::MetricPoint& q : r.curve) {
    if (q.attempt() == p.attempt() && q.kind() == contract::kKindEpoch) last = std::max(last, q.epoch());
  }
  return last;
}

std::string PointValue(const v1::MetricPoint& p, const std::string& key) {
  auto v = p.values().find(key);
  if (v != p.values().end()) return Number(v->second);
  auto l = p.labels().find(key);
  return l != p.labels().end() ? CsvField(l->second) : "";
}

std::string JsonMap(const google::protobuf::Map<std::string, double>& m) {
  std::vector<std::string> parts;
  std::map<std::string, double> sorted(m.begin(), m.end());
  for (const auto& [k, v] : sorted) parts.push_back(absl::StrCat(JsonString(k), ":", JsonNumber(v)));
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

std::string JsonPoint(const v1::MetricPoint& p) {
  std::vector<std::string> labels;
  std::map<std::string, std::string> sorted(p.labels().begin(), p.labels().end());
  for (const auto& [k, v] : sorted) labels.push_back(absl::StrCat(JsonString(k), ":", JsonString(v)));
  return absl::StrCat("{\"seq\":", p.seq(), ",\"attempt\":", p.attempt(), ",\"kind\":", JsonString(p.kind()),
                      ",\"epoch\":", p.epoch(), ",\"step\":", p.step(), ",\"at_ms\":", p.at_ms(),
                      ",\"values\":", JsonMap(p.values()), ",\"labels\":{", absl::StrJoin(labels, ","), "}}");
}

std::string JsonRun(const ExportRun& r, bool include_curves) {
  std::vector<std::string> labels;
  for (const std::string& name : r.label_order) {
    auto it = r.run.labels().find(name);
    if (it != r.run.labels().end())
      labels.push_back(absl::StrCat(JsonString(name), ":", JsonString(it->second)));
  }
  std::string out =
      absl::StrCat("{\"run_id\":", r.run.id(), ",\"index\":", r.run.index(),
                   ",\"state\":", JsonString(v1::RunState_Name(r.run.state())), ",\"labels\":{",
                   absl::StrJoin(labels, ","), "},\"final_metrics\":", JsonMap(r.run.final_metrics()),
                   ",\"content_hash\":", JsonString(r.run.content_hash()), ",\"attempt\":", r.run.attempt(),
                   ",\"reused_from\":", r.run.reused_from());
  if (include_curves) {
    std::vector<std::string> points;
    for (const v1::MetricPoint& p : r.curve) points.push_back(JsonPoint(p));
    absl::StrAppend(&out, ",\"curve\":[", absl::StrJoin(points, ","), "]");
  }
  return out + "}";
}

}  // namespace

std::string ExportCsv(const std::vector<ExportRun>& runs, bool include_curves) {
  std::vector<std::string> labels = LabelColumns(runs);
  const std::vector<std::string> config = ConfigColumns(runs);
  std::vector<std::string> header = {"run_id", "index"};
  for (const std::string& l : labels) header.push_back(CsvField(l));
  header.push_back("state");
  for (const std::string& c : config) header.push_back("config." + c);
  std::string out;
  if (!include_curves) {
    std::vector<std::string> finals = FinalColumns(runs);
    for (const std::string& f : finals) header.push_back(CsvField(f));
    header.push_back("content_hash");
    out = absl::StrCat(absl::StrJoin(header, ","), "\n");
    for (const ExportRun& r : runs) {
      std::vector<std::string> row = RunFields(r, labels, config);
      for (const std::string& f : finals) {
        auto it = r.run.final_metrics().find(f);
        row.push_back(it == r.run.final_metrics().end() ? "" : Number(it->second));
      }
      row.push_back(r.run.content_hash());
      absl::StrAppend(&out, absl::StrJoin(row, ","), "\n");
    }
    return out;
  }
  std::vector<std::string> values = CurveColumns(runs);
  for (const char* c : {"attempt", "seq", "kind", "epoch", "step", "at_ms"}) header.push_back(c);
  for (const std::string& v : values) header.push_back(CsvField(v));
  out = absl::StrCat(absl::StrJoin(header, ","), "\n");
  for (const ExportRun& r : runs) {
    for (const v1::MetricPoint& p : r.curve) {
      if (p.kind() == contract::kKindProgress) continue;  // A step count for live views: no values.
      std::vector<std::string> row = RunFields(r, labels, config);
      for (std::string f :
           {absl::StrCat(p.attempt()), absl::StrCat(p.seq()), CsvField(p.kind()),
            absl::StrCat(PointEpoch(r, p)), absl::StrCat(p.step()), absl::StrCat(p.at_ms())}) {
        row.push_back(f);
      }
      for (const std::string& v : values) row.push_back(PointValue(p, v));
      absl::StrAppend(&out, absl::StrJoin(row, ","), "\n");
    }
  }
  return out;
}

std::string ExportJson(int64_t sweep_id, const std::vector<ExportRun>& runs, bool include_curves) {
  std::vector<std::string> items;
  for (const ExportRun& r : runs) items.push_back(JsonRun(r, include_curves));
  return SafeJsonText(
      absl::StrCat("{\"sweep_id\":", sweep_id, ",\"runs\":[", absl::StrJoin(items, ",\n"), "]}\n"));
}

}  // namespace nmsparse::server
