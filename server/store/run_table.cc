#include "server/store/run_table.h"

#include <algorithm>
#include <unordered_map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace nmsparse::server {
namespace {

constexpr char kSummaryColumns[] =
    "id, sweep_id, idx, content_hash, state, attempt, worker_id, slots, created_at_ms, started_at_ms, "
    "finished_at_ms, final_metrics, priority, max_retries, message, reused_from, gpus, retries_used, "
    "cancel_requested, submitted_by, early_stop_reason, lineage, nodes, gang";
constexpr char kFullColumns[] = ", resolved_spec";

std::vector<uint32_t> ParseSlots(const std::string& text) {
  std::vector<uint32_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    uint32_t v = 0;
    if (absl::SimpleAtoi(part, &v)) out.push_back(v);
  }
  return out;
}

RunRecord RecordFromRow(const Statement& st, RunDetail detail) {
  RunRecord r;
  v1::Run& run = r.run;
  run.set_id(st.Int(0));
  run.set_sweep_id(st.Int(1));
  run.set_index(static_cast<uint32_t>(st.Int(2)));
  run.set_content_hash(st.Text(3));
  run.set_state(static_cast<v1::RunState>(st.Int(4)));
  run.set_attempt(static_cast<uint32_t>(st.Int(5)));
  run.set_worker_id(st.Int(6));
  for (uint32_t s : ParseSlots(st.Text(7))) run.add_slots(s);
  run.set_created_at_ms(st.Int(8));
  run.set_started_at_ms(st.Int(9));
  run.set_finished_at_ms(st.Int(10));
  if (!st.IsNull(11)) {
    v1::MetricPoint finals;
    finals.ParseFromString(st.Text(11));
    run.mutable_final_metrics()->insert(finals.values().begin(), finals.values().end());
  }
  run.set_priority(static_cast<int32_t>(st.Int(12)));
  run.set_max_retries(static_cast<uint32_t>(st.Int(13)));
  run.set_message(st.Text(14));
  run.set_reused_from(st.Int(15));
  r.gpus = static_cast<uint32_t>(st.Int(16));
  r.retries_used = static_cast<uint32_t>(st.Int(17));
  r.cancel_requested = st.Int(18) != 0;
  run.set_submitted_by(st.Text(19));
  r.early_stop_reason = st.Text(20);
  if (!st.IsNull(21)) run.mutable_lineage()->ParseFromString(st.Text(21));
  r.nodes = static_cast<uint32_t>(std::max<int64_t>(1, st.Int(22)));
  if (r.nodes > 1) run.set_nodes(r.nodes);
  if (!st.IsNull(23)) run.mutable_gang()->ParseFromString(st.Text(23));
  if (detail == RunDetail::kFull) {
    run.set_resolved_spec(st.Text(24));
  }
  return r;
}

std::string SelectColumns(RunDetail detail) {
  return absl::StrCat("SELECT ", kSummaryColumns, detail == RunDetail::kFull ? kFullColumns : "",
                      " FROM runs");
}

absl::Status LoadLabels(Database* db, RunRecord* r) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("SELECT name, value FROM run_labels WHERE run_id = ? ORDER BY pos"));
  st->Bind(1, r->run.id());
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return absl::OkStatus();
    r->label_order.push_back(st->Text(0));
    r->run.add_label_axes(r->label_order.back());
    (*r->run.mutable_labels())[r->label_order.back()] = st->Text(1);
  }
}

absl::Status InsertLabels(Database* db, int64_t run_id, const NewRun& run) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("INSERT INTO run_labels (run_id, pos, name, value) VALUES (?,?,?,?)"));
  for (size_t i = 0; i < run.labels.size(); ++i) {
    st->Reset();
    NM_RETURN_IF_ERROR(st->Bind(1, run_id)
                           .Bind(2, static_cast<int64_t>(i))
                           .BindText(3, run.labels[i].first)
                           .BindText(4, run.labels[i].second)
                           .Run());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ScanQueue(Database* db, uint32_t max_gpus, const std::function<bool(const QueuedRun&)>& visit);

std::string FormatSlots(const std::vector<uint32_t>& slots) { return absl::StrJoin(slots, ","); }

absl::StatusOr<int64_t> InsertRun(Database* db, int64_t sweep_id, const NewRun& run, int64_t now_ms,
                                  const ReuseSource* reuse) {
  NM_ASSIGN_OR_RETURN(
      Stmt st,
      db->Prepare("INSERT INTO runs (sweep_id, idx, content_hash, state, gpus, resolved_spec, "
                  "priority, max_retries, created_at_ms, queued_at_ms, finished_at_ms, final_metrics, "
                  "reused_from, message, parent_run_id, lineage, submitted_by, nodes) VALUES "
                  "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?, (SELECT submitted_by FROM sweeps WHERE id = ?1), ?17)"));
  st->Bind(1, sweep_id)
      .Bind(2, run.index)
      .BindText(3, run.content_hash)
      .Bind(4, static_cast<int>(reuse ? v1::SUCCEEDED : v1::QUEUED))
      .Bind(5, run.gpus)
      .BindText(6, run.resolved_spec)
      .Bind(7, run.priority)
      .Bind(8, run.max_retries)
      .Bind(9, now_ms)
      .Bind(10, now_ms)
      .Bind(17, std::max<uint32_t>(run.nodes, 1));
  if (reuse) {
    st->Bind(11, now_ms).BindBlob(12, reuse->final_metrics).Bind(13, reuse->run_id);
    st->BindText(14, absl::StrCat("reused results of run ", reuse->run_id, " (same content hash)"));
  } else {
    st->Bind(11, int64_t{0}).BindNull(12).Bind(13, int64_t{0}).BindText(14, "");
  }
  if (run.lineage.parent_run_id() != 0) {
    st->Bind(15, run.lineage.parent_run_id()).BindBlob(16, run.lineage.SerializeAsString());
  } else {
    st->Bind(15, int64_t{0}).BindNull(16);
  }
  NM_RETURN_IF_ERROR(st->Run());
  int64_t id = db->LastInsertId();
  st.reset();
  NM_RETURN_IF_ERROR(InsertLabels(db, id, run));
  return id;
}

absl::StatusOr<std::optional<ReuseSource>> FindSucceeded(Database* db, const std::string& content_hash) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT id, final_metrics FROM runs WHERE content_hash = ? AND "
                                           "state = ? AND reused_from = 0 ORDER BY id LIMIT 1"));
  st->BindText(1, content_hash).Bind(2, static_cast<int>(v1::SUCCEEDED));
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return std::optional<ReuseSource>();
  return std::optional<ReuseSource>(ReuseSource{st->Int(0), st->Text(1)});
}

absl::StatusOr<std::optional<ResumableRun>> FindResumable(Database* db, const std::string& content_hash) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT id, state FROM runs WHERE content_hash = ? AND state IN "
                                           "(?, ?) ORDER BY id DESC LIMIT 1"));
  st->BindText(1, content_hash)
      .Bind(2, static_cast<int>(v1::FAILED))
      .Bind(3, static_cast<int>(v1::CANCELLED));
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return std::optional<ResumableRun>();
  return std::optional<ResumableRun>(ResumableRun{st->Int(0), static_cast<v1::RunState>(st->Int(1))});
}

absl::StatusOr<RunRecord> LoadRun(Database* db, int64_t id, RunDetail detail) {
  RunRecord r;
  {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(absl::StrCat(SelectColumns(detail), " WHERE id = ?")));
    st->Bind(1, id);
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return absl::NotFoundError(absl::StrCat("no run with id ", id));
    r = RecordFromRow(*st, detail);
  }
  NM_RETURN_IF_ERROR(LoadLabels(db, &r));
  return r;
}

absl::StatusOr<std::vector<RunRecord>> QueryRuns(Database* db, const RunFilter& f, RunDetail detail) {
  // Only the filters in use appear in the SQL, so SQLite can pick the matching index.
  std::vector<std::string> where;
  if (f.sweep_id != 0) where.push_back("sweep_id = ?1");
  if (f.state != v1::RUN_STATE_UNSPECIFIED) where.push_back("state = ?2");
  if (f.worker_id != 0) where.push_back("worker_id = ?3");
  if (f.active_only) where.push_back("state IN (2, 3)");
  std::string sql =
      absl::StrCat(SelectColumns(detail), where.empty() ? "" : " WHERE ", absl::StrJoin(where, " AND "),
                   " ORDER BY sweep_id, idx, id LIMIT ?4 OFFSET ?5");
  std::vector<RunRecord> out;
  {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(sql));
    if (f.sweep_id != 0) st->Bind(1, f.sweep_id);
    if (f.state != v1::RUN_STATE_UNSPECIFIED) st->Bind(2, static_cast<int>(f.state));
    if (f.worker_id != 0) st->Bind(3, f.worker_id);
    st->Bind(4, f.limit == 0 ? int64_t{-1} : static_cast<int64_t>(f.limit));
    st->Bind(5, static_cast<int64_t>(f.offset));
    while (true) {
      NM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      out.push_back(RecordFromRow(*st, detail));
    }
  }
  for (RunRecord& r : out) NM_RETURN_IF_ERROR(LoadLabels(db, &r));
  return out;
}

absl::StatusOr<std::vector<QueuedRun>> QueuedInOrder(Database* db) {
  std::vector<QueuedRun> out;
  NM_RETURN_IF_ERROR(ScanQueue(db, UINT32_MAX, [&out](const QueuedRun& q) {
    out.push_back(q);
    return true;
  }));
  return out;
}

absl::Status ScanQueue(Database* db, uint32_t max_gpus, const std::function<bool(const QueuedRun&)>& visit) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT id, gpus, nodes, sweep_id, content_hash FROM runs "
                                           "WHERE state = 1 AND gpus <= ? ORDER BY priority DESC, id"));
  st->Bind(1, max_gpus);
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return absl::OkStatus();
    QueuedRun q{st->Int(0), static_cast<uint32_t>(st->Int(1)),
                static_cast<uint32_t>(std::max<int64_t>(1, st->Int(2))), st->Int(3), st->Text(4)};
    if (!visit(q)) return absl::OkStatus();
  }
}

std::string RunKey(int64_t sweep_id, const std::string& content_hash) {
  return absl::StrCat(sweep_id, "/", content_hash);
}

absl::StatusOr<std::set<std::string>> ActiveRunKeys(Database* db) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT sweep_id, content_hash FROM runs WHERE state IN (2, 3)"));
  std::set<std::string> out;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return out;
    out.insert(RunKey(st->Int(0), st->Text(1)));
  }
}

absl::StatusOr<std::vector<std::pair<int64_t, std::vector<uint32_t>>>> HeldSlots(Database* db) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT worker_id, slots, gang FROM runs WHERE state IN (2, 3)"));
  std::vector<std::pair<int64_t, std::vector<uint32_t>>> out;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return out;
    if (st->IsNull(2)) {
      out.emplace_back(st->Int(0), ParseSlots(st->Text(1)));
      continue;
    }
    v1::Gang gang;  // Every node's slots, node 0's included.
    gang.ParseFromString(st->Text(2));
    for (const v1::GangMember& m : gang.members())
      out.emplace_back(m.worker_id(), std::vector<uint32_t>(m.slots().begin(), m.slots().end()));
  }
}

absl::Status FillQueuePositions(Database* db, std::vector<RunRecord>* runs) {
  bool any = false;
  for (const RunRecord& r : *runs) any |= r.run.state() == v1::QUEUED;
  if (!any) return absl::OkStatus();
  NM_ASSIGN_OR_RETURN(std::vector<QueuedRun> queue, QueuedInOrder(db));
  std::unordered_map<int64_t, int64_t> position;
  position.reserve(queue.size());
  for (size_t i = 0; i < queue.size(); ++i) position[queue[i].run_id] = static_cast<int64_t>(i) + 1;
  for (RunRecord& r : *runs) {
    auto it = position.find(r.run.id());
    r.run.set_queue_position(it == position.end() ? 0 : it->second);
  }
  return absl::OkStatus();
}

bool HoldsAttempt(const v1::Run& run, int64_t worker_id) { return NodeRankOf(run, worker_id) >= 0; }

int NodeRankOf(const v1::Run& run, int64_t worker_id) {
  if (run.worker_id() == worker_id) return 0;
  for (const v1::GangMember& m : run.gang().members()) {
    if (m.worker_id() == worker_id) return static_cast<int>(m.node_rank());
  }
  return -1;
}

absl::StatusOr<std::vector<RunRecord>> ActiveRunsHeldBy(Database* db, int64_t worker_id, v1::RunState state,
                                                        RunDetail detail) {
  RunFilter f;
  f.state = state;
  f.active_only = state == v1::RUN_STATE_UNSPECIFIED;
  NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, QueryRuns(db, f, detail));
  std::vector<RunRecord> out;
  for (RunRecord& r : runs) {
    if (HoldsAttempt(r.run, worker_id)) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace nmsparse::server
