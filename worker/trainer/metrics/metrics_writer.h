// One flat JSON object per line (numbers and strings only), the metric protocol between nmtrain and the
// worker agent (contract/metric_line.h, docs/nmtrain.md).
#ifndef NMSPARSE_WORKER_TRAINER_METRICS_METRICS_WRITER_H_
#define NMSPARSE_WORKER_TRAINER_METRICS_METRICS_WRITER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "contract/metric_line.h"

namespace nmsparse {

class MetricLine {
 public:
  explicit MetricLine(const std::string& kind) { Add(contract::kKindKey, kind); }
  MetricLine& Add(const std::string& key, double value);
  MetricLine& Add(const std::string& key, int64_t value);
  MetricLine& Add(const std::string& key, int value) { return Add(key, static_cast<int64_t>(value)); }
  MetricLine& Add(const std::string& key, const std::string& value);
  MetricLine& Add(const std::string& key, const char* value) { return Add(key, std::string(value)); }
  std::string ToJson() const;  // Non-finite numbers become null.

 private:
  std::vector<std::pair<std::string, std::string>> fields_;  // key -> encoded JSON value
};

// Writes and flushes the line (stdout for rank 0).
void EmitMetric(std::ostream& out, const MetricLine& line);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_METRICS_METRICS_WRITER_H_
