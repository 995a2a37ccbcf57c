#include "server/store/event_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/store/status_macros.h"

namespace nmsparse::server {
namespace {

// Reserves `n` consecutive sequence numbers of a run; returns the first.
absl::StatusOr<int64_t> ReserveSeq(Database* db, int64_t run_id, int64_t n) {
  NM_ASSIGN_OR_RETURN(
      Stmt st, db->Prepare("UPDATE runs SET next_seq = next_seq + ?1 WHERE id = ?2 RETURNING next_seq - ?1"));
  st->Bind(1, n).Bind(2, run_id);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no run with id ", run_id));
  int64_t first = st->Int(0);
  NM_RETURN_IF_ERROR(st->Run());  // Finish the statement so the update is complete.
  return first;
}

v1::StateChange ChangeFromRow(const Statement& st, int64_t run_id) {
  v1::StateChange c;
  c.set_run_id(run_id);
  c.set_seq(st.Int(0));
  c.set_from(static_cast<v1::RunState>(st.Int(1)));
  c.set_to(static_cast<v1::RunState>(st.Int(2)));
  c.set_attempt(static_cast<uint32_t>(st.Int(3)));
  c.set_at_ms(st.Int(4));
  c.set_reason(st.Text(5));
  return c;
}

v1::MetricPoint PointFromRow(const Statement& st, int64_t run_id) {
  v1::MetricPoint p;
  p.ParseFromString(st.Text(1));
  p.set_run_id(run_id);
  p.set_seq(st.Int(0));
  return p;
}

v1::LogLine LogFromRow(const Statement& st, int64_t run_id) {
  v1::LogLine l;
  l.set_run_id(run_id);
  l.set_seq(st.Int(0));
  l.set_attempt(static_cast<uint32_t>(st.Int(1)));
  l.set_rank(static_cast<uint32_t>(st.Int(2)));
  l.set_at_ms(st.Int(3));
  l.set_text(st.Text(4));
  return l;
}

int64_t EventSeq(const v1::RunEvent& e) {
  if (e.has_metric()) return e.metric().seq();
  if (e.has_state()) return e.state().seq();
  return e.log().seq();
}

}  // namespace

absl::Status AppendStateChange(Database* db, int64_t run_id, v1::RunState from, v1::RunState to,
                               uint32_t attempt, int64_t now_ms, const std::string& reason) {
  NM_ASSIGN_OR_RETURN(int64_t seq, ReserveSeq(db, run_id, 1));
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("INSERT INTO state_changes (run_id, seq, from_state, to_state, "
                                           "attempt, at_ms, reason) VALUES (?,?,?,?,?,?,?)"));
  return st->Bind(1, run_id)
      .Bind(2, seq)
      .Bind(3, static_cast<int>(from))
      .Bind(4, static_cast<int>(to))
      .Bind(5, attempt)
      .Bind(6, now_ms)
      .BindText(7, reason)
      .Run();
}

absl::StatusOr<int64_t> AppendMetric(Database* db, int64_t run_id, uint32_t attempt, v1::MetricPoint point,
                                     int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(int64_t seq, ReserveSeq(db, run_id, 1));
  point.set_run_id(run_id);
  point.set_attempt(attempt);
  point.set_seq(seq);
  if (point.at_ms() == 0) point.set_at_ms(now_ms);
  if (point.kind().empty()) point.set_kind("epoch");
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("INSERT INTO metrics (run_id, seq, attempt, kind, epoch, step, at_ms, "
                                  "point) VALUES (?,?,?,?,?,?,?,?)"));
  NM_RETURN_IF_ERROR(st->Bind(1, run_id)
                         .Bind(2, seq)
                         .Bind(3, attempt)
                         .BindText(4, point.kind())
                         .Bind(5, point.epoch())
                         .Bind(6, static_cast<int64_t>(point.step()))
                         .Bind(7, point.at_ms())
                         .BindBlob(8, point.SerializeAsString())
                         .Run());
  return seq;
}

absl::Status AppendLogs(Database* db, int64_t run_id, uint32_t attempt,
                        const google::protobuf::RepeatedPtrField<v1::LogLine>& lines, int64_t now_ms) {
  if (lines.empty()) return absl::OkStatus();
  NM_ASSIGN_OR_RETURN(int64_t seq, ReserveSeq(db, run_id, lines.size()));
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("INSERT INTO logs (run_id, seq, attempt, rank, at_ms, text) "
                                           "VALUES (?,?,?,?,?,?)"));
  for (const v1::LogLine& line : lines) {
    st->Reset();
    NM_RETURN_IF_ERROR(st->Bind(1, run_id)
                           .Bind(2, seq++)
                           .Bind(3, attempt)
                           .Bind(4, line.rank())
                           .Bind(5, line.at_ms() ? line.at_ms() : now_ms)
                           .BindText(6, line.text())
                           .Run());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::StateChange>> StateHistory(Database* db, int64_t run_id) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT seq, from_state, to_state, attempt, at_ms, reason FROM "
                                           "state_changes WHERE run_id = ? ORDER BY seq"));
  st->Bind(1, run_id);
  std::vector<v1::StateChange> out;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return out;
    out.push_back(ChangeFromRow(*st, run_id));
  }
}

absl::StatusOr<std::vector<v1::MetricPoint>> MetricPoints(Database* db, int64_t run_id, int64_t from_seq) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT seq, point FROM metrics WHERE run_id = ? AND seq >= ? "
                                           "ORDER BY seq"));
  st->Bind(1, run_id).Bind(2, from_seq);
  std::vector<v1::MetricPoint> out;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return out;
    out.push_back(PointFromRow(*st, run_id));
  }
}

absl::StatusOr<v1::MetricPoint> LastFinalPoint(Database* db, int64_t run_id, uint32_t attempt) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT seq, point FROM metrics WHERE run_id = ? AND attempt = ? "
                                           "AND kind = 'final' ORDER BY seq DESC LIMIT 1"));
  st->Bind(1, run_id).Bind(2, attempt);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return v1::MetricPoint();
  return PointFromRow(*st, run_id);
}

absl::StatusOr<std::vector<v1::LogLine>> LogLines(Database* db, int64_t run_id, int64_t from_seq,
                                                  uint32_t limit) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("SELECT seq, attempt, rank, at_ms, text FROM logs WHERE run_id = ? "
                                  "AND seq >= ? ORDER BY seq LIMIT ?"));
  st->Bind(1, run_id).Bind(2, from_seq).Bind(3, limit == 0 ? int64_t{-1} : static_cast<int64_t>(limit));
  std::vector<v1::LogLine> out;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return out;
    out.push_back(LogFromRow(*st, run_id));
  }
}

absl::StatusOr<std::vector<v1::RunEvent>> EventsFrom(Database* db, int64_t run_id, int64_t from_seq,
                                                     uint32_t limit) {
  std::vector<v1::RunEvent> out;
  NM_ASSIGN_OR_RETURN(std::vector<v1::MetricPoint> points, MetricPoints(db, run_id, from_seq));
  for (auto& p : points) *out.emplace_back().mutable_metric() = std::move(p);
  NM_ASSIGN_OR_RETURN(std::vector<v1::LogLine> logs, LogLines(db, run_id, from_seq, 0));
  for (auto& l : logs) *out.emplace_back().mutable_log() = std::move(l);
  {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT seq, from_state, to_state, attempt, at_ms, reason FROM "
                                             "state_changes WHERE run_id = ? AND seq >= ? ORDER BY seq"));
    st->Bind(1, run_id).Bind(2, from_seq);
    while (true) {
      NM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      *out.emplace_back().mutable_state() = ChangeFromRow(*st, run_id);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const v1::RunEvent& a, const v1::RunEvent& b) { return EventSeq(a) < EventSeq(b); });
  if (limit > 0 && out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace nmsparse::server
