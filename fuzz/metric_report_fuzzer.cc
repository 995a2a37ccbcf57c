// Fuzzes the coordinator's intake of a worker's metric report, as gRPC hands it over: the bytes are a
// serialized v1.MetricReport, aimed at a real run of a sweep with ASHA early stopping on an in-memory SQLite
// store, and taken through the production path (the request bounds, then TakeMetricReport: the metric-line
// contract, the resend check, the one-final rule, the store and the rung decision). The same report is then
// sent again, as a worker does when an answer is lost. Whatever is refused must be INVALID_ARGUMENT with a
// message; whatever is stored holds only finite values, and a report sent again is never stored twice.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/status_macros.h"
#include "fuzz/fuzz_check.h"
#include "nmsparse/v1/worker_gateway.pb.h"
#include "schemas/request_bounds.h"
#include "server/api/metric_intake.h"
#include "server/store/event_table.h"
#include "server/store/run_table.h"
#include "server/store/store.h"
#include "server/store/sweep_table.h"
#include "server/sweeps/sweep_submission.h"

namespace {

using nmsparse::server::Database;

// One sweep whose top1 is ranked by ASHA at epochs 1 and 2, with one run; returns the run.
absl::StatusOr<nmsparse::server::RunRecord> OneAshaRun(Database* db) {
  nmsparse::v1::SweepSpec spec;
  spec.set_name("fuzz");
  nmsparse::v1::EarlyStopping* es = spec.mutable_early_stopping();
  es->set_policy("asha");
  es->set_metric("top1");
  es->set_mode("max");
  es->set_resource("epoch");
  es->set_min_resource(1);
  es->set_reduction_factor(2);
  es->set_max_resource(4);
  NM_ASSIGN_OR_RETURN(int64_t sweep, nmsparse::server::InsertSweep(db, spec, 1, {}));
  nmsparse::server::NewRun run;
  run.content_hash = "h";
  run.resolved_spec = "model: {name: vit_micro_patch4_28}\n";
  NM_ASSIGN_OR_RETURN(nmsparse::v1::Run stored, nmsparse::server::StoreRun(db, spec, sweep, run, 1, "fuzz"));
  return nmsparse::server::LoadRun(db, stored.id(), nmsparse::server::RunDetail::kSummary);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nmsparse::v1::MetricReport report;
  if (!report.ParseFromArray(data, static_cast<int>(size))) return 0;  // gRPC would refuse these bytes.
  if (!nmsparse::CutAndCheckReportBounds(&report).ok()) return 0;      // Refused before the intake.
  absl::StatusOr<std::unique_ptr<nmsparse::server::Store>> store = nmsparse::server::Store::Open(":memory:");
  FUZZ_CHECK(store.ok(), store.status().ToString());
  const absl::Status s = (*store)->Write([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(nmsparse::server::RunRecord run, OneAshaRun(db));
    report.mutable_run()->set_run_id(run.run.id());
    report.mutable_run()->set_attempt(1);
    for (int send = 0; send < 2; ++send) {
      const absl::StatusOr<bool> stored = nmsparse::server::TakeMetricReport(db, run, report, {}, 1000);
      if (!stored.ok()) {
        FUZZ_CHECK(absl::IsInvalidArgument(stored.status()) && !stored.status().message().empty(),
                   stored.status().ToString());
        FUZZ_CHECK(send == 0,
                   "a report taken once was refused when sent again: " + stored.status().ToString());
        return absl::OkStatus();
      }
      FUZZ_CHECK(send == 0 || !*stored, "a report sent again was stored twice");
    }
    NM_ASSIGN_OR_RETURN(std::vector<nmsparse::v1::MetricPoint> points,
                        nmsparse::server::MetricPoints(db, run.run.id(), 0));
    for (const nmsparse::v1::MetricPoint& p : points) {
      for (const auto& [name, value] : p.values()) FUZZ_CHECK(std::isfinite(value), name);
    }
    return absl::OkStatus();
  });
  FUZZ_CHECK(s.ok(), s.ToString());
  return 0;
}
