#include "worker/trainer/metrics/metrics_writer.h"

#include <cmath>
#include <cstdio>

#include "schemas/json_string.h"

namespace nmsparse {

MetricLine& MetricLine::Add(const std::string& key, double value) {
  if (!std::isfinite(value)) {
    fields_.emplace_back(key, "null");
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.10g", value);
  fields_.emplace_back(key, buf);
  return *this;
}

MetricLine& MetricLine::Add(const std::string& key, int64_t value) {
  fields_.emplace_back(key, std::to_string(value));
  return *this;
}

MetricLine& MetricLine::Add(const std::string& key, const std::string& value) {
  fields_.emplace_back(key, JsonString(value));
  return *this;
}

std::string MetricLine::ToJson() const {
  std::string out = "{";
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (i > 0) out += ",";
    out += JsonString(fields_[i].first) + ":" + fields_[i].second;
  }
  return out + "}";
}

void EmitMetric(std::ostream& out, const MetricLine& line) { out << line.ToJson() << std::endl; }

}  // namespace nmsparse
