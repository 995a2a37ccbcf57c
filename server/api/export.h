// A sweep's runs as CSV or JSON: run id, index, labels (one column each, in axis order), state, final metrics
// and content hash; with curves, every metric point too (CSV: one row per point; JSON: a "curve" per run).
// Both are safe to print on a terminal: CSV cells are one line of visible text (CsvField), JSON is valid
// UTF-8 with every display control escaped (common/safe_json.h), which keeps the exact strings.
#ifndef NMSPARSE_SERVER_API_EXPORT_H_
#define NMSPARSE_SERVER_API_EXPORT_H_

#include <map>
#include <string>
#include <vector>

#include "common/markup_text.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::server {

struct ExportRun {
  v1::Run run;
  std::vector<std::string> label_order;  // Axis names in axis order.
  std::vector<v1::MetricPoint> curve;    // Empty unless curves were asked for.
};

std::string ExportCsv(const std::vector<ExportRun>& runs, bool include_curves);
std::string ExportJson(int64_t sweep_id, const std::vector<ExportRun>& runs, bool include_curves);

// One cell: common/markup_text.h's CsvField (one line of visible text, formulas neutralised, RFC 4180).
using ::nmsparse::CsvField;

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_API_EXPORT_H_
