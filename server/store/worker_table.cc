#include "server/store/worker_table.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/store/run_table.h"

namespace nmsparse::server {
namespace {

constexpr char kSelect[] = "SELECT id, host, slots, last_heartbeat_ms, alive, dead_since_ms FROM workers";

WorkerRecord RecordFromRow(const Statement& st) {
  WorkerRecord r;
  r.worker.ParseFromString(st.Text(2));  // Only slots are stored in the blob.
  r.worker.set_id(st.Int(0));
  r.worker.set_host(st.Text(1));
  r.worker.set_last_heartbeat_ms(st.Int(3));
  r.worker.set_alive(st.Int(4) != 0);
  r.dead_since_ms = st.Int(5);
  return r;
}

absl::StatusOr<std::vector<int64_t>> Ids(Stmt st) {
  std::vector<int64_t> out;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return out;
    out.push_back(st->Int(0));
  }
}

}  // namespace

absl::StatusOr<int64_t> UpsertWorker(Database* db, int64_t id, const std::string& host,
                                     const google::protobuf::RepeatedPtrField<v1::Slot>& slots,
                                     const std::string& job, int64_t now_ms,
                                     const std::string& advertise_addr, const std::string& storage) {
  // The slots column holds a v1.Worker with only its slots, job, address and storage.
  v1::Worker blob;
  *blob.mutable_slots() = slots;
  blob.set_job(job);
  blob.set_advertise_addr(advertise_addr);
  blob.set_storage(storage);
  if (id != 0) {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE workers SET host = ?, slots = ?, last_heartbeat_ms = ?, "
                                             "alive = 1, dead_since_ms = 0 WHERE id = ?"));
    NM_RETURN_IF_ERROR(
        st->BindText(1, host).BindBlob(2, blob.SerializeAsString()).Bind(3, now_ms).Bind(4, id).Run());
    if (db->Changes() == 1) return id;
  }
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("INSERT INTO workers (host, slots, registered_at_ms, "
                                           "last_heartbeat_ms) VALUES (?, ?, ?, ?)"));
  NM_RETURN_IF_ERROR(
      st->BindText(1, host).BindBlob(2, blob.SerializeAsString()).Bind(3, now_ms).Bind(4, now_ms).Run());
  return db->LastInsertId();
}

absl::StatusOr<WorkerRecord> LoadWorker(Database* db, int64_t id) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(absl::StrCat(kSelect, " WHERE id = ?")));
  st->Bind(1, id);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no worker with id ", id));
  return RecordFromRow(*st);
}

absl::StatusOr<std::string> WorkerSessionSha256(Database* db, int64_t id) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT session_sha256 FROM workers WHERE id = ?"));
  st->Bind(1, id);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no worker with id ", id));
  return st->Text(0);
}

absl::Status SetWorkerSession(Database* db, int64_t id, const std::string& sha256_hex) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE workers SET session_sha256 = ? WHERE id = ?"));
  return st->BindText(1, sha256_hex).Bind(2, id).Run();
}

absl::StatusOr<int64_t> WorkerBySession(Database* db, const std::string& sha256_hex) {
  if (sha256_hex.empty()) return 0;
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT id FROM workers WHERE session_sha256 = ?"));
  st->BindText(1, sha256_hex);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  return row ? st->Int(0) : 0;
}

absl::StatusOr<std::vector<WorkerRecord>> ListWorkerRecords(Database* db) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(absl::StrCat(kSelect, " ORDER BY id")));
  std::vector<WorkerRecord> out;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return out;
    out.push_back(RecordFromRow(*st));
  }
}

absl::Status TouchWorker(Database* db, int64_t id, int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("UPDATE workers SET last_heartbeat_ms = ? WHERE id = ? AND alive = 1"));
  NM_RETURN_IF_ERROR(st->Bind(1, now_ms).Bind(2, id).Run());
  if (db->Changes() == 0) {
    return absl::NotFoundError(
        absl::StrCat("worker ", id, " is not registered or its lease expired; register again"));
  }
  return absl::OkStatus();
}

absl::Status MarkWorkerGone(Database* db, int64_t id, int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE workers SET alive = 0, dead_since_ms = ? WHERE id = ? AND "
                                           "alive = 1"));
  return st->Bind(1, now_ms).Bind(2, id).Run();
}

absl::StatusOr<std::vector<int64_t>> ExpireWorkers(Database* db, int64_t deadline_ms, int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("UPDATE workers SET alive = 0, dead_since_ms = ? WHERE alive = 1 AND "
                                  "last_heartbeat_ms < ? RETURNING id"));
  st->Bind(1, now_ms).Bind(2, deadline_ms);
  return Ids(std::move(st));
}

absl::StatusOr<std::vector<int64_t>> DeadWorkersHoldingRuns(Database* db, int64_t deadline_ms) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare("SELECT w.id FROM workers w WHERE w.alive = 0 AND w.dead_since_ms < ? "
                                  "AND EXISTS (SELECT 1 FROM runs r WHERE r.worker_id = w.id AND "
                                  "r.state IN (2, 3))"));
  st->Bind(1, deadline_ms);
  NM_ASSIGN_OR_RETURN(std::vector<int64_t> ids, Ids(std::move(st)));
  // Nodes 1.. of multi-node runs: few active gangs, read whole.
  NM_ASSIGN_OR_RETURN(Stmt gangs,
                      db->Prepare("SELECT gang FROM runs WHERE state IN (2, 3) AND gang IS NOT NULL"));
  std::set<int64_t> members;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, gangs->Step());
    if (!row) break;
    v1::Gang gang;
    gang.ParseFromString(gangs->Text(0));
    for (const v1::GangMember& m : gang.members()) members.insert(m.worker_id());
  }
  for (int64_t id : members) {
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) continue;
    NM_ASSIGN_OR_RETURN(WorkerRecord w, LoadWorker(db, id));
    if (!w.worker.alive() && w.dead_since_ms < deadline_ms) ids.push_back(id);
  }
  return ids;
}

absl::Status RenewAllLeases(Database* db, int64_t now_ms) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE workers SET last_heartbeat_ms = ? WHERE alive = 1"));
  return st->Bind(1, now_ms).Run();
}

absl::StatusOr<uint32_t> LargestWorkerSlots(Database* db, int64_t* worker_id) {
  NM_ASSIGN_OR_RETURN(std::vector<WorkerRecord> workers, ListWorkerRecords(db));
  uint32_t best = 0;
  for (const WorkerRecord& w : workers) {
    if (static_cast<uint32_t>(w.worker.slots_size()) > best) {
      best = static_cast<uint32_t>(w.worker.slots_size());
      if (worker_id) *worker_id = w.worker.id();
    }
  }
  return best;
}

absl::StatusOr<std::vector<v1::Worker>> WorkersWithRuns(Database* db) {
  NM_ASSIGN_OR_RETURN(std::vector<WorkerRecord> records, ListWorkerRecords(db));
  RunFilter f;
  f.active_only = true;
  NM_ASSIGN_OR_RETURN(std::vector<RunRecord> active, QueryRuns(db, f, RunDetail::kSummary));
  std::map<int64_t, std::vector<std::pair<int64_t, int>>> by_worker;  // Run id, slots used.
  for (const RunRecord& r : active) {
    if (r.run.gang().members_size() == 0) {
      by_worker[r.run.worker_id()].emplace_back(r.run.id(), r.run.slots_size());
      continue;
    }
    for (const v1::GangMember& m : r.run.gang().members())
      by_worker[m.worker_id()].emplace_back(r.run.id(), m.slots_size());
  }
  std::vector<v1::Worker> out;
  for (WorkerRecord& w : records) {
    uint32_t used = 0;
    for (const auto& [run_id, slots] : by_worker[w.worker.id()]) {
      w.worker.add_running_runs(run_id);
      used += slots;
    }
    uint32_t total = static_cast<uint32_t>(w.worker.slots_size());
    w.worker.set_free_slots(w.worker.alive() && used < total ? total - used : 0);
    out.push_back(std::move(w.worker));
  }
  return out;
}

}  // namespace nmsparse::server
