#include "schemas/limits.h"

namespace nmsparse::limits {

const std::vector<Limit>& AllLimits() {
  static const auto* all = new std::vector<Limit>{
      {"runs per sweep", kDefaultMaxRunsPerSweep,
       "nmserver --max_runs_per_sweep; nmctl --max-runs-per-sweep or NMSPARSE_MAX_RUNS_PER_SWEEP"},
      {"spec file size (bytes)", kMaxSpecFileBytes, ""},
      {"gRPC request size (bytes)", kMaxRequestBytes, ""},
      {"gRPC response size (bytes)", kMaxResponseBytes, ""},
      {"stored log lines per run", kDefaultMaxLogLinesPerRun, "nmserver --max_log_lines_per_run"},
      {"stored metric points per run", kDefaultMaxMetricPointsPerRun, "nmserver --max_metric_points_per_run"},
      {"log line length (bytes)", kMaxLogLineBytes, ""},
  };
  return *all;
}

std::string FormatCount(int64_t value) {
  const bool negative = value < 0;
  // Digits of the magnitude, without overflowing on INT64_MIN.
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string digits = std::to_string(magnitude);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

std::string CutLogLine(std::string_view text) {
  if (static_cast<int64_t>(text.size()) <= kMaxLogLineBytes) return std::string(text);
  size_t end = static_cast<size_t>(kMaxLogLineBytes);
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // A continuation byte.
  return std::string(text.substr(0, end)) + " [" + FormatCount(static_cast<int64_t>(text.size() - end)) +
         " bytes cut]";
}

}  // namespace nmsparse::limits
