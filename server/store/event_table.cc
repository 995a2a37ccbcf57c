#include "server/store/event_table.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "contract/metric_line.h"

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

// A point without a kind is stored as an epoch point.
std::string StoredKind(const v1::MetricPoint& point) {
  return point.kind().empty() ? contract::kKindEpoch : point.kind();
}

int64_t EventSeq(const v1::RunEvent& e) {
  if (e.has_metric()) return e.metric().seq();
  if (e.has_state()) return e.state().seq();
  return e.log().seq();
}

absl::Status InsertLogRow(Database* db, int64_t run_id, int64_t seq, uint32_t attempt, uint32_t rank,
                          int64_t at_ms, const std::string& text) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("INSERT INTO logs (run_id, seq, attempt, rank, at_ms, text) "
                                           "VALUES (?,?,?,?,?,?)"));
  return st->Bind(1, run_id)
      .Bind(2, seq)
      .Bind(3, attempt)
      .Bind(4, rank)
      .Bind(5, at_ms)
      .BindText(6, text)
      .Run();
}

// A capped kind of event: its counters in the runs table and the words of its notice line.
struct Volume {
  const char* stored;      // Column: items stored.
  const char* dropped;     // Column: items dropped past the cap.
  const char* notice_seq;  // Column: seq of the notice line, 0 before the first drop.
  const char* items;       // "log line(s)"
  const char* limit_name;  // "stored log lines"
  const char* flag;        // "--max_log_lines_per_run"
};
constexpr Volume kLogVolume = {"log_lines",   "log_lines_dropped", "log_notice_seq",
                               "log line(s)", "stored log lines",  "--max_log_lines_per_run"};
constexpr Volume kMetricVolume = {"metric_points",   "metric_points_dropped", "metric_notice_seq",
                                  "metric point(s)", "stored metric points",  "--max_metric_points_per_run"};

struct VolumeRow {
  int64_t stored = 0;
  int64_t dropped = 0;
  int64_t notice_seq = 0;
};

absl::StatusOr<VolumeRow> LoadVolume(Database* db, int64_t run_id, const Volume& v) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(absl::StrCat("SELECT ", v.stored, ", ", v.dropped, ", ",
                                                        v.notice_seq, " FROM runs WHERE id = ?")));
  st->Bind(1, run_id);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no run with id ", run_id));
  return VolumeRow{st->Int(0), st->Int(1), st->Int(2)};
}

absl::Status CountStored(Database* db, int64_t run_id, const Volume& v, int64_t n) {
  if (n == 0) return absl::OkStatus();
  NM_ASSIGN_OR_RETURN(
      Stmt st, db->Prepare(absl::StrCat("UPDATE runs SET ", v.stored, " = ", v.stored, " + ? WHERE id = ?")));
  return st->Bind(1, n).Bind(2, run_id).Run();
}

// Counts `n` more dropped items; the run's one notice line says how many, appended on the first drop and
// rewritten after, so that a chatty run costs one row however much it drops.
absl::Status RecordDropped(Database* db, int64_t run_id, uint32_t attempt, const Volume& v,
                           const VolumeRow& row, int64_t n, int64_t limit, int64_t now_ms) {
  if (n == 0) return absl::OkStatus();
  const int64_t dropped = row.dropped + n;
  const std::string text = absl::StrCat(
      "[nmserver] ", limits::FormatCount(dropped), " ", v.items, " dropped: this run reached the limit of ",
      limits::FormatCount(limit), " ", v.limit_name, " (nmserver ", v.flag, ")");
  int64_t notice = row.notice_seq;
  if (notice == 0) {
    NM_ASSIGN_OR_RETURN(notice, ReserveSeq(db, run_id, 1));
    NM_RETURN_IF_ERROR(InsertLogRow(db, run_id, notice, attempt, 0, now_ms, text));
  } else {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE logs SET text = ? WHERE run_id = ? AND seq = ?"));
    NM_RETURN_IF_ERROR(st->BindText(1, text).Bind(2, run_id).Bind(3, notice).Run());
  }
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(absl::StrCat("UPDATE runs SET ", v.dropped, " = ?, ", v.notice_seq,
                                                        " = ? WHERE id = ?")));
  return st->Bind(1, dropped).Bind(2, notice).Bind(3, run_id).Run();
}

// The attempt's stored progress point (at most one: each replaces the one before), through metrics_point.
absl::Status DropProgress(Database* db, int64_t run_id, uint32_t attempt) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("DELETE FROM metrics WHERE run_id = ? AND attempt = ? AND kind = ?"));
  return st->Bind(1, run_id).Bind(2, attempt).BindText(3, contract::kKindProgress).Run();
}

// The worker's number of the attempt's last stored log line (0: none numbered yet).
absl::StatusOr<uint64_t> LogMark(Database* db, int64_t run_id, uint32_t attempt) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("SELECT last_report_id FROM log_marks WHERE run_id = ? AND attempt = ?"));
  st->Bind(1, run_id).Bind(2, attempt);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  return row ? static_cast<uint64_t>(st->Int(0)) : 0;
}

absl::Status SetLogMark(Database* db, int64_t run_id, uint32_t attempt, uint64_t report_id) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("INSERT OR REPLACE INTO log_marks (run_id, attempt, last_report_id) "
                                  "VALUES (?, ?, ?)"));
  return st->Bind(1, run_id).Bind(2, attempt).Bind(3, static_cast<int64_t>(report_id)).Run();
}

// A run's stored log lines under its cap keep a flood's head and its tail, with one notice line between
// them that counts every line of the run not stored. Once the run holds `limit` lines, the line at half the
// cap becomes the notice and each later line evicts the oldest line after it. Lines a worker dropped
// (v1.LogLine.dropped_before) end the head where they were: the notice goes there (a later gap also drops
// the lines stored after the notice), so that what follows the notice is always the run's latest lines, in
// one piece. The metric cap's notice line is never evicted.
class LogFlood {
 public:
  static absl::StatusOr<LogFlood> Load(Database* db, int64_t run_id, uint32_t attempt, int64_t limit,
                                       int64_t now_ms) {
    LogFlood f(db, run_id, attempt, limit, now_ms);
    NM_ASSIGN_OR_RETURN(f.row_, LoadVolume(db, run_id, kLogVolume));
    NM_ASSIGN_OR_RETURN(VolumeRow metrics, LoadVolume(db, run_id, kMetricVolume));
    f.metric_notice_ = metrics.notice_seq;
    f.dropped_before_ = f.row_.dropped;
    return f;
  }

  // `n` lines the worker dropped before the next one.
  absl::Status DroppedByWorker(int64_t n) {
    if (row_.notice_seq == 0) {
      NM_ASSIGN_OR_RETURN(row_.notice_seq, ReserveSeq(db_, run_id_, 1));
      NM_RETURN_IF_ERROR(InsertLogRow(db_, run_id_, row_.notice_seq, attempt_, 0, now_ms_, ""));
    } else {
      NM_RETURN_IF_ERROR(EvictTail(/*max_rows=*/-1));
    }
    row_.dropped += n;
    return absl::OkStatus();
  }

  // Whether the next line may be stored: under the cap, or after making room in the tail.
  absl::StatusOr<bool> MakeRoom() {
    if (row_.stored < limit_) return true;
    if (row_.notice_seq == 0) NM_RETURN_IF_ERROR(StartNotice());
    if (row_.stored >= limit_) NM_RETURN_IF_ERROR(EvictTail(row_.stored - limit_ + 1));
    if (row_.stored < limit_) return true;
    ++row_.dropped;  // No tail to evict (a cap of 0, or lowered since): the line itself goes.
    return false;
  }

  void Stored() { ++row_.stored; }

  // Writes the counters, and the notice when the count changed.
  absl::Status Save() {
    if (row_.dropped != dropped_before_) {
      if (row_.notice_seq == 0) {
        NM_ASSIGN_OR_RETURN(row_.notice_seq, ReserveSeq(db_, run_id_, 1));
        NM_RETURN_IF_ERROR(InsertLogRow(db_, run_id_, row_.notice_seq, attempt_, 0, now_ms_, ""));
      }
      const std::string text = absl::StrCat(
          "[nmserver] ", limits::FormatCount(row_.dropped),
          " log line(s) dropped here, between the run's first lines and its latest (the limit is ",
          limits::FormatCount(limit_),
          " stored log lines, nmserver --max_log_lines_per_run; a worker whose outbox is full drops lines "
          "too)");
      NM_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("UPDATE logs SET text = ? WHERE run_id = ? AND seq = ?"));
      NM_RETURN_IF_ERROR(st->BindText(1, text).Bind(2, run_id_).Bind(3, row_.notice_seq).Run());
    }
    NM_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("UPDATE runs SET log_lines = ?, log_lines_dropped = ?, "
                                              "log_notice_seq = ? WHERE id = ?"));
    return st->Bind(1, row_.stored).Bind(2, row_.dropped).Bind(3, row_.notice_seq).Bind(4, run_id_).Run();
  }

 private:
  LogFlood(Database* db, int64_t run_id, uint32_t attempt, int64_t limit, int64_t now_ms)
      : db_(db), run_id_(run_id), attempt_(attempt), limit_(limit), now_ms_(now_ms) {}

  // The stored line at half the cap becomes the notice (it counts as dropped); none when there is no such
  // line (a cap of 0): the notice is then appended.
  absl::Status StartNotice() {
    NM_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT seq FROM logs WHERE run_id = ? AND seq != ? ORDER BY "
                                              "seq LIMIT 1 OFFSET ?"));
    st->Bind(1, run_id_).Bind(2, metric_notice_).Bind(3, limit_ / 2);
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return absl::OkStatus();
    row_.notice_seq = st->Int(0);
    --row_.stored;
    ++row_.dropped;
    return absl::OkStatus();
  }

  // Drops the oldest `max_rows` lines after the notice (all of them for -1).
  absl::Status EvictTail(int64_t max_rows) {
    if (row_.notice_seq == 0) return absl::OkStatus();
    NM_ASSIGN_OR_RETURN(Stmt st,
                        db_->Prepare("DELETE FROM logs WHERE run_id = ?1 AND seq IN (SELECT seq FROM "
                                     "logs WHERE run_id = ?1 AND seq > ?2 AND seq != ?3 ORDER BY seq "
                                     "LIMIT ?4)"));
    NM_RETURN_IF_ERROR(
        st->Bind(1, run_id_).Bind(2, row_.notice_seq).Bind(3, metric_notice_).Bind(4, max_rows).Run());
    const int64_t evicted = db_->Changes();
    row_.stored -= evicted;
    row_.dropped += evicted;
    return absl::OkStatus();
  }

  Database* db_;
  int64_t run_id_;
  uint32_t attempt_;
  int64_t limit_;
  int64_t now_ms_;
  VolumeRow row_;
  int64_t metric_notice_ = 0;
  int64_t dropped_before_ = 0;
};

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

absl::StatusOr<int64_t> StoredMetricSeq(Database* db, int64_t run_id, uint32_t attempt,
                                        const v1::MetricPoint& point) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT seq FROM metrics WHERE run_id = ? AND attempt = ? AND "
                                           "kind = ? AND epoch = ? AND step = ? LIMIT 1"));
  st->Bind(1, run_id)
      .Bind(2, attempt)
      .BindText(3, StoredKind(point))
      .Bind(4, point.epoch())
      .Bind(5, static_cast<int64_t>(point.step()));
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  return row ? st->Int(0) : 0;
}

absl::StatusOr<int64_t> AppendMetric(Database* db, int64_t run_id, uint32_t attempt, v1::MetricPoint point,
                                     int64_t now_ms, const EventCaps& caps) {
  if (point.kind() == contract::kKindProgress) {
    NM_RETURN_IF_ERROR(DropProgress(db, run_id, attempt));
  } else {
    NM_ASSIGN_OR_RETURN(VolumeRow volume, LoadVolume(db, run_id, kMetricVolume));
    if (volume.stored >= caps.max_metric_points && point.kind() != contract::kKindFinal) {
      NM_RETURN_IF_ERROR(
          RecordDropped(db, run_id, attempt, kMetricVolume, volume, 1, caps.max_metric_points, now_ms));
      return 0;
    }
    NM_RETURN_IF_ERROR(CountStored(db, run_id, kMetricVolume, 1));
  }
  NM_ASSIGN_OR_RETURN(int64_t seq, ReserveSeq(db, run_id, 1));
  point.set_run_id(run_id);
  point.set_attempt(attempt);
  point.set_seq(seq);
  if (point.at_ms() == 0) point.set_at_ms(now_ms);
  point.set_kind(StoredKind(point));
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

absl::StatusOr<int64_t> AppendLogs(Database* db, int64_t run_id, uint32_t attempt,
                                   const google::protobuf::RepeatedPtrField<v1::LogLine>& lines,
                                   int64_t now_ms, const EventCaps& caps) {
  NM_ASSIGN_OR_RETURN(const uint64_t mark, LogMark(db, run_id, attempt));
  std::vector<const v1::LogLine*> fresh;  // Not stored before: unnumbered, or numbered past the mark.
  uint64_t newest = mark;
  for (const v1::LogLine& line : lines) {
    if (line.report_id() != 0 && line.report_id() <= mark) continue;
    fresh.push_back(&line);
    newest = std::max<uint64_t>(newest, line.report_id());
  }
  if (fresh.empty()) return 0;
  NM_ASSIGN_OR_RETURN(LogFlood flood, LogFlood::Load(db, run_id, attempt, caps.max_log_lines, now_ms));
  int64_t stored = 0;
  for (const v1::LogLine* line : fresh) {
    if (line->dropped_before() > 0) {
      NM_RETURN_IF_ERROR(flood.DroppedByWorker(static_cast<int64_t>(line->dropped_before())));
    }
    NM_ASSIGN_OR_RETURN(bool room, flood.MakeRoom());
    if (!room) continue;
    NM_ASSIGN_OR_RETURN(int64_t seq, ReserveSeq(db, run_id, 1));
    NM_RETURN_IF_ERROR(InsertLogRow(db, run_id, seq, attempt, line->rank(),
                                    line->at_ms() ? line->at_ms() : now_ms,
                                    limits::CutLogLine(line->text())));
    flood.Stored();
    ++stored;
  }
  // Dropped lines count as handled too: sent again, they are neither stored nor counted twice.
  if (newest > mark) NM_RETURN_IF_ERROR(SetLogMark(db, run_id, attempt, newest));
  NM_RETURN_IF_ERROR(flood.Save());
  return stored;
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

absl::StatusOr<RecordedProgress> LastRecordedProgress(Database* db, int64_t run_id) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT IFNULL(MAX(step), 0), IFNULL(MAX(epoch), 0) FROM metrics "
                                           "WHERE run_id = ? AND kind IN ('step', 'epoch')"));
  st->Bind(1, run_id);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  RecordedProgress out;
  if (row) {
    out.step = static_cast<uint64_t>(st->Int(0));
    out.epoch = static_cast<uint32_t>(st->Int(1));
  }
  return out;
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
