#include "server/store/rung_table.h"

#include "common/status_macros.h"

namespace nmsparse::server {
namespace {

constexpr char kSelect[] =
    "SELECT run_id, value, promoted, reason FROM rung_results WHERE sweep_id = ? AND rung = ?";

constexpr int kStopped = 0;
constexpr int kPromoted = 1;
constexpr int kWaiting = 2;

int PromotedColumn(const RungResult& r) { return r.waiting ? kWaiting : r.promoted ? kPromoted : kStopped; }

RungResult FromRow(const Statement& st) {
  RungResult r;
  r.run_id = st.Int(0);
  r.value = st.Double(1);
  r.promoted = st.Int(2) == kPromoted;
  r.waiting = st.Int(2) == kWaiting;
  r.reason = st.Text(3);
  return r;
}

}  // namespace

absl::StatusOr<std::vector<RungResult>> RungResults(Database* db, int64_t sweep_id, int rung) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(std::string(kSelect) + " ORDER BY pos"));
  st->Bind(1, sweep_id).Bind(2, rung);
  std::vector<RungResult> out;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return out;
    out.push_back(FromRow(*st));
  }
}

absl::StatusOr<std::optional<RungResult>> FindRungResult(Database* db, int64_t sweep_id, int rung,
                                                         int64_t run_id) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(std::string(kSelect) + " AND run_id = ?"));
  st->Bind(1, sweep_id).Bind(2, rung).Bind(3, run_id);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return std::optional<RungResult>();
  return std::optional<RungResult>(FromRow(*st));
}

absl::Status InsertRungResult(Database* db, int64_t sweep_id, int rung, const RungResult& result,
                              int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(
      Stmt st,
      db->Prepare("INSERT INTO rung_results (sweep_id, rung, run_id, pos, value, promoted, reason, "
                  "at_ms) VALUES (?1, ?2, ?3, (SELECT COUNT(*) FROM rung_results WHERE sweep_id = ?1 "
                  "AND rung = ?2), ?4, ?5, ?6, ?7)"));
  return st->Bind(1, sweep_id)
      .Bind(2, rung)
      .Bind(3, result.run_id)
      .Bind(4, result.value)
      .Bind(5, PromotedColumn(result))
      .BindText(6, result.reason)
      .Bind(7, now_ms)
      .Run();
}

absl::Status DecideWaitingRungResult(Database* db, int64_t sweep_id, int rung, const RungResult& result) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("UPDATE rung_results SET promoted = ?4, reason = ?5 WHERE sweep_id = "
                                  "?1 AND rung = ?2 AND run_id = ?3 AND promoted = ?6"));
  return st->Bind(1, sweep_id)
      .Bind(2, rung)
      .Bind(3, result.run_id)
      .Bind(4, PromotedColumn(result))
      .BindText(5, result.reason)
      .Bind(6, kWaiting)
      .Run();
}

}  // namespace nmsparse::server
