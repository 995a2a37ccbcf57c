#include "worker/trainer/metrics_writer.h"

#include <cmath>
#include <cstdio>

namespace nmsparse {

std::string JsonEscape(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

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
  fields_.emplace_back(key, JsonEscape(value));
  return *this;
}

std::string MetricLine::ToJson() const {
  std::string out = "{";
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (i > 0) out += ",";
    out += JsonEscape(fields_[i].first) + ":" + fields_[i].second;
  }
  return out + "}";
}

void EmitMetric(std::ostream& out, const MetricLine& line) { out << line.ToJson() << std::endl; }

}  // namespace nmsparse
