#include "server/store/migrations.h"

#include "absl/strings/str_cat.h"
#include "server/store/legacy_sweep_base.h"
#include "common/status_macros.h"

namespace nmsparse::server {

const std::vector<std::string>& Migrations() {
  static const auto* kMigrations = new std::vector<std::string>{
      // 1: sweeps, runs and their append-only history; workers.
      R"sql(
CREATE TABLE sweeps (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  spec BLOB NOT NULL,                -- serialized v1.SweepSpec
  idempotency_key TEXT UNIQUE,       -- NULL when none was given
  priority INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  cancelled INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  idx INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  state INTEGER NOT NULL,            -- v1.RunState
  attempt INTEGER NOT NULL DEFAULT 0,
  worker_id INTEGER NOT NULL DEFAULT 0,
  slots TEXT NOT NULL DEFAULT '',    -- comma-separated slot indices
  gpus INTEGER NOT NULL,
  resolved_spec TEXT NOT NULL,
  spec BLOB NOT NULL,                -- serialized v1.ExperimentSpec (dropped by migration 13)
  priority INTEGER NOT NULL,
  max_retries INTEGER NOT NULL,
  retries_used INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  created_at_ms INTEGER NOT NULL,
  queued_at_ms INTEGER NOT NULL DEFAULT 0,
  assigned_at_ms INTEGER NOT NULL DEFAULT 0,
  started_at_ms INTEGER NOT NULL DEFAULT 0,
  finished_at_ms INTEGER NOT NULL DEFAULT 0,
  final_metrics BLOB,                -- serialized v1.MetricPoint (values only)
  message TEXT NOT NULL DEFAULT '',
  reused_from INTEGER NOT NULL DEFAULT 0,
  next_seq INTEGER NOT NULL DEFAULT 1 -- per-run event sequence shared by state changes, metrics and logs
);
CREATE INDEX runs_queue ON runs(state, priority DESC, id);
CREATE INDEX runs_sweep ON runs(sweep_id, idx);
CREATE INDEX runs_hash ON runs(content_hash, state);
CREATE INDEX runs_worker ON runs(worker_id, state);
CREATE TABLE run_labels (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  pos INTEGER NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, pos)
) WITHOUT ROWID;
CREATE TABLE state_changes (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  from_state INTEGER NOT NULL,
  to_state INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE metrics (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  kind TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  step INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  point BLOB NOT NULL,               -- serialized v1.MetricPoint (values and labels)
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE logs (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE workers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  host TEXT NOT NULL,
  slots BLOB NOT NULL,               -- serialized v1.Worker holding only its slots
  registered_at_ms INTEGER NOT NULL,
  last_heartbeat_ms INTEGER NOT NULL,
  alive INTEGER NOT NULL DEFAULT 1,
  dead_since_ms INTEGER NOT NULL DEFAULT 0
);
)sql",
      // 2: per-run volume counters for the log and metric caps (docs/reliability.md, "Limits"); the notice
      // columns hold the seq of the one log line that says how many were dropped (0: none yet).
      R"sql(
ALTER TABLE runs ADD COLUMN log_lines INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN log_lines_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN log_notice_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN metric_points INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN metric_points_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN metric_notice_seq INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET log_lines = (SELECT COUNT(*) FROM logs WHERE logs.run_id = runs.id),
                metric_points = (SELECT COUNT(*) FROM metrics WHERE metrics.run_id = runs.id);
)sql",
      // 3: access tokens (only their SHA-256 is stored) and who submitted each sweep and run ('' before
      // authentication was turned on, or on a coordinator without tokens).
      R"sql(
CREATE TABLE tokens (
  name TEXT PRIMARY KEY,
  role TEXT NOT NULL,                -- worker | user | admin
  token_sha256 TEXT NOT NULL UNIQUE, -- hex SHA-256 of the token
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL DEFAULT 0  -- 0: never
);
ALTER TABLE sweeps ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
)sql",
      // 4: early stopping (ASHA, docs/sweeps.md). rung_results holds each decision once, in report order
      // (pos), so that a restarted coordinator neither decides again nor decides differently;
      // early_stop_reason, set with cancel_requested, makes the stopped run end STOPPED_EARLY, not CANCELLED.
      R"sql(
CREATE TABLE rung_results (
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  rung INTEGER NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  pos INTEGER NOT NULL,              -- 0-based arrival order at this rung of this sweep
  value REAL NOT NULL,
  promoted INTEGER NOT NULL,
  reason TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (sweep_id, rung, run_id)
) WITHOUT ROWID;
ALTER TABLE runs ADD COLUMN early_stop_reason TEXT NOT NULL DEFAULT '';
)sql",
      // 5: lineage of forks (nmctl fork): the parent run, its attempt and last step when forked, and the
      // overrides (serialized v1.RunLineage, NULL for a run that is not a fork). parent_run_id is a column of
      // its own so that a run's forks can be found.
      R"sql(
ALTER TABLE runs ADD COLUMN parent_run_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN lineage BLOB;
CREATE INDEX runs_parent ON runs(parent_run_id) WHERE parent_run_id != 0;
)sql",
      // 6: why a search sweep's search ended before its budget ('' while it goes on; v1.Sweep.search_ended).
      R"sql(
ALTER TABLE sweeps ADD COLUMN search_ended TEXT NOT NULL DEFAULT '';
)sql",
      // 7: a metric point is found by its attempt, kind, epoch and step, so that a report sent again (its
      // answer was lost, or the batch it came in failed part-way) is not stored twice (AppendMetric).
      R"sql(
CREATE INDEX metrics_point ON metrics(run_id, attempt, kind, epoch, step);
)sql",
      // 8: each sweep's run count per state, kept by triggers in the transaction of every change to runs, so
      // that loading a sweep costs the same at 50 runs as at 50,000 (it used to count them, per metric
      // point).
      R"sql(
CREATE TABLE sweep_run_counts (
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  state INTEGER NOT NULL,            -- v1.RunState
  n INTEGER NOT NULL,
  PRIMARY KEY (sweep_id, state)
) WITHOUT ROWID;
INSERT INTO sweep_run_counts (sweep_id, state, n) SELECT sweep_id, state, COUNT(*) FROM runs GROUP BY 1, 2;
CREATE TRIGGER runs_count_insert AFTER INSERT ON runs BEGIN
  INSERT OR IGNORE INTO sweep_run_counts (sweep_id, state, n) VALUES (NEW.sweep_id, NEW.state, 0);
  UPDATE sweep_run_counts SET n = n + 1 WHERE sweep_id = NEW.sweep_id AND state = NEW.state;
END;
CREATE TRIGGER runs_count_update AFTER UPDATE OF sweep_id, state ON runs
    WHEN OLD.state != NEW.state OR OLD.sweep_id != NEW.sweep_id BEGIN
  UPDATE sweep_run_counts SET n = n - 1 WHERE sweep_id = OLD.sweep_id AND state = OLD.state;
  INSERT OR IGNORE INTO sweep_run_counts (sweep_id, state, n) VALUES (NEW.sweep_id, NEW.state, 0);
  UPDATE sweep_run_counts SET n = n + 1 WHERE sweep_id = NEW.sweep_id AND state = NEW.state;
END;
CREATE TRIGGER runs_count_delete AFTER DELETE ON runs BEGIN
  UPDATE sweep_run_counts SET n = n - 1 WHERE sweep_id = OLD.sweep_id AND state = OLD.state;
END;
)sql",
      // 9: the last log line stored of each attempt, by the worker's number for it (v1.LogLine.report_id), so
      // that a batch sent again after its answer was lost is not stored twice (AppendLogs).
      R"sql(
CREATE TABLE log_marks (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  attempt INTEGER NOT NULL,
  last_report_id INTEGER NOT NULL,
  PRIMARY KEY (run_id, attempt)
) WITHOUT ROWID;
)sql",
      // 10: each worker's registration session (docs/security.md, "Workers"): the SHA-256 of the secret its
      // Register returned ('' for a worker registered before sessions existed, which its next Register
      // claims).
      R"sql(
ALTER TABLE workers ADD COLUMN session_sha256 TEXT NOT NULL DEFAULT '';
CREATE INDEX workers_session ON workers(session_sha256) WHERE session_sha256 != '';
)sql",
      // 11: ownership by token, not by name (docs/security.md): the SHA-256 of the submitter's token. A sweep
      // stored before gets the token its submitter's name has now ('' when none: then only admins change it).
      // Idempotency keys stay as stored; new ones are scoped by the owner's token (InsertSweep).
      R"sql(
ALTER TABLE sweeps ADD COLUMN owner_token TEXT NOT NULL DEFAULT '';
UPDATE sweeps SET owner_token = IFNULL((SELECT token_sha256 FROM tokens WHERE tokens.name = sweeps.submitted_by), '')
  WHERE submitted_by != '';
)sql",
      // 12: runs over several nodes (docs/cluster.md, "One run on several nodes"): how many nodes a run
      // needs, and its current attempt's gang (a serialized v1.Gang: every node's worker and slots, where its
      // ranks meet); NULL for a single-node attempt, whose worker_id and slots say it all.
      R"sql(
ALTER TABLE runs ADD COLUMN nodes INTEGER NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN gang BLOB;
)sql",
      // 13: a spec is stored once, as YAML (wire version 2, common/version.h): a run's is its resolved_spec
      // (canonical YAML, unchanged, so its content hash still holds), whose copy as a v1.ExperimentSpec goes;
      // a sweep's base, inside its stored v1.SweepSpec, becomes YAML text by DataStep.
      R"sql(
ALTER TABLE runs DROP COLUMN spec;
)sql",
  };
  return *kMigrations;
}

namespace {

absl::StatusOr<int> CurrentVersion(Database* db) {
  NM_RETURN_IF_ERROR(db->Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT MAX(version) FROM schema_version"));
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  return row && !st->IsNull(0) ? static_cast<int>(st->Int(0)) : 0;
}

// The migrations that SQL alone cannot write, by version: run after the version's SQL, in its transaction.
absl::Status DataStep(Database* db, int version) {
  if (version == 13) return ConvertLegacySweepBases(db);
  return absl::OkStatus();
}

absl::Status Apply(Database* db, int version, const std::string& sql) {
  Transaction tx(db);
  NM_RETURN_IF_ERROR(tx.Begin());
  NM_RETURN_IF_ERROR(db->Exec(sql));
  NM_RETURN_IF_ERROR(DataStep(db, version));
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("INSERT INTO schema_version (version) VALUES (?)"));
  NM_RETURN_IF_ERROR(st->Bind(1, version).Run());
  st.reset();
  return tx.Commit();
}

}  // namespace

absl::StatusOr<int> Migrate(Database* db) {
  NM_ASSIGN_OR_RETURN(int version, CurrentVersion(db));
  const auto& all = Migrations();
  if (version > static_cast<int>(all.size())) {
    return absl::FailedPreconditionError(absl::StrCat("database ", db->path(), " has schema version ",
                                                      version, ", newer than this nmserver (", all.size(),
                                                      ")"));
  }
  for (int v = version; v < static_cast<int>(all.size()); ++v) {
    absl::Status s = Apply(db, v + 1, all[v]);
    if (!s.ok()) return absl::InternalError(absl::StrCat("migration ", v + 1, " failed: ", s.message()));
  }
  return static_cast<int>(all.size());
}

}  // namespace nmsparse::server
