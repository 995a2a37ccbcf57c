#include "cli/cluster_commands.h"

#include <grpcpp/grpcpp.h>

#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/run_format.h"
#include "cli/table_printer.h"
#include "common/visible_text.h"

namespace nmsparse::cli {

std::string FormatTimeLeft(int64_t seconds) {
  if (seconds < 0) return "-";
  if (seconds >= 3600)
    return absl::StrFormat("%dh%02dm", static_cast<long long>(seconds / 3600),
                           static_cast<long long>((seconds % 3600) / 60));
  if (seconds >= 60) return absl::StrCat(seconds / 60, "m");
  return absl::StrCat(seconds, "s");
}

std::string WorkerJobSummary(const v1::ClusterStatus& cluster, const std::string& job) {
  for (const v1::PoolJob& j : cluster.jobs()) {
    if (j.id() != job) continue;
    std::string out = absl::StrCat(j.id(), " ", j.state());
    if (!j.node().empty()) absl::StrAppend(&out, " on ", j.node());
    if (j.time_left_s() >= 0) absl::StrAppend(&out, ", ", FormatTimeLeft(j.time_left_s()), " left");
    return out;
  }
  return job;
}

int RunClusterCommand(const CommandContext& context) {
  if (!context.args->positional.empty())
    return Fail(context, absl::InvalidArgumentError("'cluster' takes no argument"));
  absl::StatusOr<v1::ClusterStatus> cluster =
      context.connection().Call(&v1::Coordinator::Stub::GetCluster, v1::GetClusterRequest());
  if (!cluster.ok()) return Fail(context, cluster.status());
  if (context.json) {
    PrintJson(context, *cluster);
    return kExitOk;
  }
  std::ostream& out = *context.out;
  if (cluster->launcher().empty()) {
    out << "no worker launcher: workers are started by hand (nmctl workers lists them; docs/cluster.md)\n";
    if (cluster->waiting_size() > 0) out << "\nwhy runs wait:\n";
    for (const std::string& w : cluster->waiting()) out << "  " << VisibleText(w) << "\n";
    return kExitOk;
  }
  out << cluster->launcher() << " pool: " << cluster->target_jobs() << " job(s) wanted (max "
      << cluster->max_jobs() << ", " << cluster->slots_per_job() << " slot(s) each), "
      << cluster->queued_runs() << " run(s) queued\n";
  if (cluster->jobs_size() > 0) {
    Table table({"JOB", "STATE", "NODE", "TIME LEFT", "WORKER", "REASON"});
    for (const v1::PoolJob& j : cluster->jobs()) {
      table.AddRow({j.id(), j.state(), j.node().empty() ? "-" : j.node(), FormatTimeLeft(j.time_left_s()),
                    j.worker_id() > 0 ? absl::StrCat(j.worker_id()) : "-", j.reason()});
    }
    out << "\n" << table.Render();
  }
  if (cluster->waiting_size() > 0) {
    out << "\nwhy runs wait:\n";
    for (const std::string& w : cluster->waiting()) out << "  " << VisibleText(w) << "\n";
  }
  if (cluster->events_size() > 0) {
    out << "\nrecent events:\n";
    for (const std::string& e : cluster->events()) out << "  " << VisibleText(e) << "\n";
  }
  return kExitOk;
}

}  // namespace nmsparse::cli
