// A sweep's runs as CSV or JSON: run id, index, labels (one column each, in axis order), state, final metrics
// and content hash; with curves, every metric point too (CSV: one row per point; JSON: a "curve" per run).
#ifndef NMSPARSE_SERVER_EXPORT_H_
#define NMSPARSE_SERVER_EXPORT_H_

#include <map>
#include <string>
#include <vector>

#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::server {

struct ExportRun {
  v1::Run run;
  std::vector<std::string> label_order;  // Axis names in axis order.
  std::vector<v1::MetricPoint> curve;    // Empty unless curves were asked for.
};

std::string ExportCsv(const std::vector<ExportRun>& runs, bool include_curves);
std::string ExportJson(int64_t sweep_id, const std::vector<ExportRun>& runs, bool include_curves);

// RFC 4180 quoting when needed.
std::string CsvField(const std::string& s);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_EXPORT_H_
