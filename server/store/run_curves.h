// A sweep's runs with their metric points, read a page at a time: what reports and the dashboard's figures
// are drawn from, without one read per run. Callers hold the Store lock (inside Store::Read).
#ifndef NMSPARSE_SERVER_STORE_RUN_CURVES_H_
#define NMSPARSE_SERVER_STORE_RUN_CURVES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/store/run_table.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

// Where a page starts: the run at `from_run` in the sweep's run order (index, then id), and of its points
// those with seq > after_seq (the earlier ones came on the page before).
struct CurveCursor {
  uint32_t from_run = 0;
  int64_t after_seq = 0;
};

struct RunCurve {
  RunRecord record;                     // With spec and resolved_spec (RunDetail::kFull).
  std::vector<v1::MetricPoint> points;  // In seq order, as MetricPoints(db, run, 0) reads them.
};

struct CurvePage {
  std::vector<RunCurve> runs;
  bool more = false;  // Another page follows, from `next`.
  CurveCursor next;
};

// What one page may hold (each > 0): runs, points, and bytes of stored points (a page holds at least one
// point when one is left).
struct CurvePageBounds {
  uint32_t runs = 0;
  uint32_t points = 0;
  int64_t point_bytes = 0;
};

// The runs from the cursor on, with their points, within `bounds`: a page ends early at the run whose points
// reach a bound, and its remaining points start the next page. All points come from one query, through
// runs_sweep and the metrics primary key, with no sort.
absl::StatusOr<CurvePage> ReadCurvePage(Database* db, int64_t sweep_id, CurveCursor from,
                                        const CurvePageBounds& bounds);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_RUN_CURVES_H_
