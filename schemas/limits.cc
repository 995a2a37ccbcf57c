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
      {"metric point epoch", kMaxMetricEpoch, ""},
      {"metric point step", kMaxMetricStep, ""},
      {"name, label, key path or host in a request (bytes)", kMaxNameBytes, ""},
      {"idempotency key (bytes)", kMaxIdempotencyKeyBytes, ""},
      {"path in a request (bytes)", kMaxPathBytes, ""},
      {"override value (bytes)", kMaxValueTextBytes, ""},
      {"run end message (bytes)", kMaxRunMessageBytes, ""},
      {"any other request string (bytes)", kMaxStringBytes, ""},
      {"entries of a repeated or map field", kMaxRepeatedCount, ""},
      {"values of one axis", kMaxAxisValues, ""},
      {"sweep spec in a request (bytes)", kMaxSweepSpecBytes, ""},
      {"search budget", kMaxSearchBudget, ""},
      {"search parallel", kMaxSearchParallel, ""},
      {"search n_startup", kMaxSearchStartup, ""},
      {"search n_candidates", kMaxSearchCandidates, ""},
      {"random axes of a search", kMaxSearchAxes, ""},
      {"choices of a search axis", kMaxSearchChoices, ""},
      {"model width", kMaxModelWidth, ""},
      {"model blocks", kMaxModelBlocks, ""},
      {"model patch tokens", kMaxModelTokens, ""},
      {"model parameters", kMaxModelParameters, ""},
      {"model FLOPs per image", kMaxModelFlopsPerImage, ""},
      {"random erasing boxes per image", kMaxEraseCount, ""},
      {"exported model (bytes)", kMaxModelExportBytes, ""},
      {"exported model chunk (bytes)", kModelExportChunkBytes, ""},
      {"runs per dashboard table page", kMaxDashboardPageRuns, ""},
      {"dashboard table filter (bytes)", kMaxDashboardFilterBytes, ""},
      {"runs per curve page", kMaxCurvePageRuns, ""},
      {"metric points per curve page", kMaxCurvePagePoints, ""},
      {"metric point bytes per curve page", kMaxCurvePagePointBytes, ""},
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

namespace {

std::string CutMarker(int64_t cut_bytes) { return " [" + FormatCount(cut_bytes) + " bytes cut]"; }

}  // namespace

std::string CutText(std::string_view text, int64_t max_bytes) {
  const int64_t size = static_cast<int64_t>(text.size());
  if (size <= max_bytes) return std::string(text);
  // Room for the marker at its longest (every byte cut), so that the result fits in max_bytes.
  const int64_t room = max_bytes - static_cast<int64_t>(CutMarker(size).size());
  size_t end = static_cast<size_t>(room > 0 ? room : 0);
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // A continuation byte.
  return std::string(text.substr(0, end)) + CutMarker(size - static_cast<int64_t>(end));
}

std::string CutLogLine(std::string_view text) { return CutText(text, kMaxLogLineBytes); }

}  // namespace nmsparse::limits
