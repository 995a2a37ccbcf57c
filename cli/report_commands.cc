#include "cli/report_commands.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/pooling_check.h"
#include "cli/sweep_fetch.h"
#include "common/status_macros.h"
#include "common/visible_text.h"
#include "contract/metric_names.h"
#include "report/html_report.h"

namespace nmsparse::cli {
namespace {

// mkdir -p, by POSIX calls (std::filesystem is avoided in this repository; see checkpoint_test's history).
absl::Status MakeDirs(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string prefix = dir.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(absl::StrCat("cannot create ", prefix, ": ", std::strerror(errno)));
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

}  // namespace

absl::Status WriteFiles(const std::string& dir, const std::map<std::string, std::string>& files) {
  NM_RETURN_IF_ERROR(MakeDirs(dir));
  for (const auto& [name, content] : files) {
    const std::string path = absl::StrCat(dir, "/", name);
    std::ofstream file(path, std::ios::trunc | std::ios::binary);
    file << content;
    if (!file.good()) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

int RunReportCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "sweep id");
  if (!id.ok()) return Fail(context, id.status());
  // The report's table is compare's: it refuses to average unshown grid axes as compare does, before the
  // (long) read of every run's points.
  absl::StatusOr<v1::Sweep> sweep = GetSweep(context, *id);
  if (!sweep.ok()) return Fail(context, sweep.status());
  if (absl::Status pooling = CheckPooling(context, *sweep); !pooling.ok()) return Fail(context, pooling);
  absl::StatusOr<report::SweepData> data = FetchSweepData(context, *id);
  if (!data.ok()) return Fail(context, data.status());
  const std::string metric = context.args->Get("metric").value_or(contract::kTop1);
  report::ReportOptions options;
  options.pdf = context.args->Has("pdf");
  absl::StatusOr<report::ReportFiles> report = report::BuildReport(*data, metric, options);
  if (!report.ok()) return Fail(context, report.status());
  const std::string dir = context.args->Get("output").value_or(absl::StrCat("report-sweep-", *id));
  if (absl::Status written = WriteFiles(dir, report->files); !written.ok()) return Fail(context, written);
  if (context.json) {
    Json files = Json::array();
    for (const auto& [name, content] : report->files) files.push_back(name);
    PrintJson(context, Json{{"sweep_id", *id},
                            {"index", dir + "/index.html"},
                            {"files", files},
                            {"pooled", context.args->GetAll("pool")}});
    return kExitOk;
  }
  size_t figures = 0;
  for (const auto& [name, content] : report->files) figures += absl::EndsWith(name, ".svg");
  *context.out << "wrote " << dir << "/index.html and " << figures << " figures"
               << (options.pdf ? " (SVG, PDF)" : "") << " for sweep " << *id;
  if (context.args->Has("pool")) {
    *context.out << ", pooled over " << VisibleText(absl::StrJoin(context.args->GetAll("pool"), ", "));
  }
  *context.out << "\n";
  return kExitOk;
}

}  // namespace nmsparse::cli
