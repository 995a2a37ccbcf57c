#include "server/store/run_curves.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "common/status_macros.h"

namespace nmsparse::server {

absl::StatusOr<CurvePage> ReadCurvePage(Database* db, int64_t sweep_id, CurveCursor from,
                                        const CurvePageBounds& bounds) {
  RunFilter filter;
  filter.sweep_id = sweep_id;
  filter.limit = bounds.runs;
  filter.offset = from.from_run;
  NM_ASSIGN_OR_RETURN(std::vector<RunRecord> records, QueryRuns(db, filter, RunDetail::kFull));
  NM_RETURN_IF_ERROR(FillQueuePositions(db, &records));
  CurvePage page;
  if (records.empty()) return page;
  absl::flat_hash_map<int64_t, size_t> position;  // Run id -> its place in the page.
  for (RunRecord& r : records) {
    position[r.run.id()] = page.runs.size();
    page.runs.push_back({std::move(r), {}});
  }
  // The page's runs in the sweep's run order, each run's points in seq order: runs_sweep gives (idx, id), the
  // metrics primary key (run_id, seq). Runs of the idx range outside the page (equal idx) are skipped below.
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("SELECT m.run_id, m.seq, m.point FROM runs r JOIN metrics m ON "
                                  "m.run_id = r.id WHERE r.sweep_id = ?1 AND r.idx BETWEEN ?2 AND ?3 "
                                  "AND (m.run_id != ?4 OR m.seq > ?5) ORDER BY r.idx, r.id, m.seq"));
  st->Bind(1, sweep_id)
      .Bind(2, int64_t{page.runs.front().record.run.index()})
      .Bind(3, int64_t{page.runs.back().record.run.index()})
      .Bind(4, page.runs.front().record.run.id())
      .Bind(5, from.after_seq);
  uint32_t points = 0;
  int64_t bytes = 0;
  size_t last = 0;  // Place of the run of the last point taken.
  int64_t last_seq = 0;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    auto it = position.find(st->Int(0));
    if (it == position.end()) continue;
    const size_t at = it->second;
    const int64_t seq = st->Int(1);
    const std::string blob = st->Text(2);
    const int64_t size = static_cast<int64_t>(blob.size());
    if (points == bounds.points || (points > 0 && bytes + size > bounds.point_bytes)) {
      // Full: this point starts the next page.
      const bool cut_run = points > 0 && at == last;
      page.runs.resize(cut_run ? at + 1 : at);
      page.more = true;
      page.next = {from.from_run + static_cast<uint32_t>(at), cut_run ? last_seq : 0};
      return page;
    }
    v1::MetricPoint& p = page.runs[at].points.emplace_back();
    p.ParseFromString(blob);
    p.set_run_id(st->Int(0));
    p.set_seq(seq);
    ++points;
    bytes += size;
    last = at;
    last_seq = seq;
  }
  page.more = page.runs.size() == bounds.runs;
  page.next = {from.from_run + static_cast<uint32_t>(page.runs.size()), 0};
  return page;
}

}  // namespace nmsparse::server
