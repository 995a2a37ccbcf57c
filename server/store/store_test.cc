#include "server/store/store.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "schemas/limits.h"
#include "server/store/event_table.h"
#include "server/store/migrations.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/sweep_table.h"
#include "server/store/token_table.h"

namespace nmsparse::server {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(dir ? dir : "/tmp", "/", name, "-", getpid(), ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

int64_t Count(Database* db, const std::string& sql) {
  auto st = db->Prepare(sql);
  EXPECT_TRUE(st.ok()) << st.status();
  auto row = (*st)->Step();
  EXPECT_TRUE(row.ok() && *row);
  return (*st)->Int(0);
}

// A database as an older nmserver left it: the first `version` migrations, then `rows` written by it.
void CreateAtVersion(const std::string& path, int version, const std::vector<std::string>& rows) {
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("CREATE TABLE schema_version (version INTEGER NOT NULL)").ok());
  for (int v = 0; v < version; ++v) {
    ASSERT_TRUE((*db)->Exec(Migrations()[v]).ok());
    ASSERT_TRUE((*db)->Exec(absl::StrCat("INSERT INTO schema_version (version) VALUES (", v + 1, ")")).ok());
  }
  for (const std::string& row : rows) ASSERT_TRUE((*db)->Exec(row).ok()) << row;
}

TEST(MigrationsTest, ApplyOnceAndAreIdempotent) {
  std::string path = TempPath("migrations");
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  auto v = Migrate(db->get());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, static_cast<int>(Migrations().size()));
  int64_t tables = Count(db->get(), "SELECT COUNT(*) FROM sqlite_master");
  auto again = Migrate(db->get());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *v);
  EXPECT_EQ(Count(db->get(), "SELECT COUNT(*) FROM sqlite_master"), tables);
  EXPECT_EQ(Count(db->get(), "SELECT COUNT(*) FROM schema_version"),
            static_cast<int64_t>(Migrations().size()));
  EXPECT_EQ(Count(db->get(), "PRAGMA foreign_keys"), 1);
}

TEST(MigrationsTest, RefusesANewerDatabase) {
  std::string path = TempPath("newer");
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(Migrate(db->get()).ok());
  ASSERT_TRUE((*db)->Exec("INSERT INTO schema_version (version) VALUES (99)").ok());
  auto v = Migrate(db->get());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(v.status().message().find("99"), std::string::npos);
}

// A database written before tokens existed (schema 2) keeps its sweeps and runs, with no submitter.
TEST(MigrationsTest, TokensMigrationKeepsAnOlderDatabase) {
  std::string path = TempPath("schema2");
  CreateAtVersion(
      path, 2,
      {"INSERT INTO sweeps (name, spec, priority, created_at_ms) VALUES ('old', '', 0, 1)",
       "INSERT INTO runs (sweep_id, idx, content_hash, state, gpus, resolved_spec, spec, priority, "
       "max_retries, created_at_ms) VALUES (1, 0, 'h', 1, 1, '', '', 0, 0, 1)"});
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)
                  ->Read([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(v1::Sweep sweep, LoadSweep(db, 1));
                    EXPECT_EQ(sweep.name(), "old");
                    EXPECT_EQ(sweep.submitted_by(), "");
                    NM_ASSIGN_OR_RETURN(RunRecord run, LoadRun(db, 1, RunDetail::kSummary));
                    EXPECT_EQ(run.run.content_hash(), "h");
                    EXPECT_EQ(run.run.submitted_by(), "");
                    NM_ASSIGN_OR_RETURN(bool has_tokens, HasTokens(db));
                    EXPECT_FALSE(has_tokens);
                    return absl::OkStatus();
                  })
                  .ok());
}

// A database of schema 3 (before lineage) upgrades in place: its runs load as runs without a parent, and a
// fork's lineage round-trips.
TEST(MigrationsTest, LineageMigrationKeepsAnOlderDatabase) {
  std::string path = TempPath("schema3");
  CreateAtVersion(
      path, 3,
      {"INSERT INTO sweeps (name, spec, priority, created_at_ms, submitted_by) VALUES ('old', '', 0, "
       "1, 'alice')",
       "INSERT INTO runs (sweep_id, idx, content_hash, state, gpus, resolved_spec, spec, priority, "
       "max_retries, created_at_ms, submitted_by) VALUES (1, 0, 'h', 4, 1, 'r', '', 0, 0, 1, 'alice')"});
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::Status s = (*store)->Write([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(RunRecord old, LoadRun(db, 1, RunDetail::kFull));
    EXPECT_EQ(old.run.content_hash(), "h");
    EXPECT_EQ(old.run.state(), v1::SUCCEEDED);
    EXPECT_EQ(old.run.resolved_spec(), "r");
    EXPECT_EQ(old.run.submitted_by(), "alice");
    EXPECT_FALSE(old.run.has_lineage());
    NewRun fork;
    fork.content_hash = "f";
    fork.lineage.set_parent_run_id(1);
    fork.lineage.set_parent_attempt(2);
    fork.lineage.set_parent_step(40);
    fork.lineage.add_overrides("schedule.epochs=6");
    NM_ASSIGN_OR_RETURN(int64_t id, InsertRun(db, 1, fork, 2, nullptr));
    NM_ASSIGN_OR_RETURN(RunRecord stored, LoadRun(db, id, RunDetail::kSummary));
    EXPECT_EQ(stored.run.lineage().parent_run_id(), 1);
    EXPECT_EQ(stored.run.lineage().parent_attempt(), 2u);
    EXPECT_EQ(stored.run.lineage().parent_step(), 40u);
    EXPECT_EQ(stored.run.lineage().overrides(0), "schedule.epochs=6");
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM runs WHERE parent_run_id = 1"), 1);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
}

// A database of schema 5 (before search_ended) upgrades in place: its sweeps load with their search going on,
// and the reason a search ended round-trips.
TEST(MigrationsTest, SearchEndedMigrationKeepsAnOlderDatabase) {
  std::string path = TempPath("schema5");
  CreateAtVersion(
      path, 5,
      {"INSERT INTO sweeps (name, spec, priority, created_at_ms, submitted_by) VALUES ('old', '', "
       "0, 1, 'alice')"});
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::Status s = (*store)->Write([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(v1::Sweep old, LoadSweep(db, 1));
    EXPECT_EQ(old.name(), "old");
    EXPECT_EQ(old.search_ended(), "");
    NM_RETURN_IF_ERROR(EndSearch(db, 1, "proposal 3: no valid point"));
    NM_ASSIGN_OR_RETURN(std::vector<v1::Sweep> listed, ListSweeps(db));
    EXPECT_EQ(listed.at(0).search_ended(), "proposal 3: no valid point");
    EXPECT_EQ(EndSearch(db, 2, "x").code(), absl::StatusCode::kNotFound);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
}

// A database of schema 10 (ownership by name) upgrades in place: each sweep's owner becomes the token its
// submitter's name has at the upgrade ('' when the name has none: admins only), and its idempotency key keeps
// finding it without tokens. Keys stored from then on are per owner.
TEST(MigrationsTest, OwnershipMigrationBindsSweepsToTheirSubmittersTokens) {
  std::string path = TempPath("schema10");
  CreateAtVersion(
      path, 10,
      {"INSERT INTO tokens (name, role, token_sha256, created_at_ms) VALUES ('alice', 'user', 'a1', 1)",
       "INSERT INTO sweeps (name, spec, idempotency_key, priority, created_at_ms, submitted_by) "
       "VALUES ('mine', '', 'k', 0, 1, 'alice')",
       "INSERT INTO sweeps (name, spec, priority, created_at_ms, submitted_by) VALUES ('gone', '', 0, "
       "1, 'carol')",
       "INSERT INTO sweeps (name, spec, priority, created_at_ms) VALUES ('open', '', 0, 1)"});
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::Status s = (*store)->Write([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(SweepOwner mine, LoadSweepOwner(db, 1));
    EXPECT_EQ(mine.name, "alice");
    EXPECT_EQ(mine.token_sha256, "a1");
    NM_ASSIGN_OR_RETURN(SweepOwner gone, LoadSweepOwner(db, 2));
    EXPECT_EQ(gone.name, "carol");
    EXPECT_EQ(gone.token_sha256, "");
    NM_ASSIGN_OR_RETURN(SweepOwner open, LoadSweepOwner(db, 3));
    EXPECT_EQ(open.token_sha256, "");
    NM_ASSIGN_OR_RETURN(std::optional<int64_t> keyed, FindSweepByKey(db, SweepOwner{}, "k"));
    EXPECT_EQ(keyed, std::optional<int64_t>(1));
    // New keys are per owner: bob's "k" is not alice's, nor the old unscoped one.
    v1::SweepSpec spec;
    spec.set_idempotency_key("k");
    NM_ASSIGN_OR_RETURN(int64_t bobs, InsertSweep(db, spec, 2, SweepOwner{"bob", "b1"}));
    NM_ASSIGN_OR_RETURN(std::optional<int64_t> found, FindSweepByKey(db, SweepOwner{"bob", "b1"}, "k"));
    EXPECT_EQ(found, std::optional<int64_t>(bobs));
    NM_ASSIGN_OR_RETURN(found, FindSweepByKey(db, SweepOwner{"alice", "a1"}, "k"));
    EXPECT_EQ(found, std::nullopt);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
}

TEST(TokenTableTest, StoresHashesByNameAndRecordsSubmitters) {
  auto store = Store::Open(TempPath("tokens"));
  ASSERT_TRUE(store.ok());
  absl::Status s = (*store)->Write([&](Database* db) -> absl::Status {
    NM_RETURN_IF_ERROR(InsertToken(db, TokenRecord{"alice", "user", 5, 0}, "abc123"));
    EXPECT_EQ(InsertToken(db, TokenRecord{"alice", "admin", 6, 0}, "def456").code(),
              absl::StatusCode::kAlreadyExists);
    NM_ASSIGN_OR_RETURN(std::optional<TokenRecord> found, FindTokenByHash(db, "abc123"));
    EXPECT_TRUE(found.has_value() && found->name == "alice" && found->role == "user");
    NM_ASSIGN_OR_RETURN(std::optional<TokenRecord> missing, FindTokenByHash(db, "nope"));
    EXPECT_FALSE(missing.has_value());
    v1::SweepSpec spec;
    spec.set_name("s");
    NM_ASSIGN_OR_RETURN(int64_t sweep, InsertSweep(db, spec, 1, {"alice", ""}));
    NewRun r;
    r.content_hash = "h";
    NM_ASSIGN_OR_RETURN(int64_t run, InsertRun(db, sweep, r, 1, nullptr));
    NM_ASSIGN_OR_RETURN(RunRecord record, LoadRun(db, run, RunDetail::kSummary));
    EXPECT_EQ(record.run.submitted_by(), "alice");
    NM_RETURN_IF_ERROR(DeleteToken(db, "alice"));
    EXPECT_EQ(DeleteToken(db, "alice").code(), absl::StatusCode::kNotFound);
    NM_ASSIGN_OR_RETURN(bool has_tokens, HasTokens(db));
    EXPECT_FALSE(has_tokens);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
}

class RunStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::Open(TempPath("runstate"));
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }

  int64_t AddRun(uint32_t max_retries) {
    int64_t id = 0;
    EXPECT_TRUE(store_
                    ->Write([&](Database* db) -> absl::Status {
                      v1::SweepSpec spec;
                      spec.set_name("s");
                      NM_ASSIGN_OR_RETURN(int64_t sweep, InsertSweep(db, spec, 1, {}));
                      NewRun r;
                      r.content_hash = "h";
                      r.resolved_spec = "model: {}";
                      r.max_retries = max_retries;
                      NM_ASSIGN_OR_RETURN(id, InsertRun(db, sweep, r, 1, nullptr));
                      return absl::OkStatus();
                    })
                    .ok());
    return id;
  }

  absl::StatusOr<v1::Assignment> Assign(int64_t run, int64_t worker) {
    v1::Assignment a;
    absl::Status s = store_->Write([&](Database* db) -> absl::Status {
      NM_ASSIGN_OR_RETURN(a, AssignRun(db, run, worker, {0}, 2));
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    return a;
  }

  absl::Status Complete(int64_t run, uint32_t attempt, v1::RunState outcome) {
    v1::CompleteRunRequest req;
    req.mutable_run()->set_run_id(run);
    req.mutable_run()->set_attempt(attempt);
    req.set_outcome(outcome);
    req.set_exit_code(outcome == v1::FAILED ? 3 : 0);
    return store_->Write([&](Database* db) -> absl::Status {
      if (outcome == v1::SUCCEEDED) {  // The final metrics are the attempt's final point, as a worker sends.
        v1::MetricPoint final_point;
        final_point.set_kind("final");
        (*final_point.mutable_values())["top1"] = 0.5;
        NM_RETURN_IF_ERROR(AppendMetric(db, run, attempt, final_point, 4).status());
      }
      return CompleteAttempt(db, req, 5);
    });
  }

  RunRecord Load(int64_t run) {
    RunRecord r;
    EXPECT_TRUE(store_
                    ->Read([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(r, LoadRun(db, run, RunDetail::kFull));
                      return absl::OkStatus();
                    })
                    .ok());
    return r;
  }

  std::unique_ptr<Store> store_;
};

v1::RunAttempt Attempt(int64_t run, uint32_t attempt) {
  v1::RunAttempt ra;
  ra.set_run_id(run);
  ra.set_attempt(attempt);
  return ra;
}

TEST_F(RunStateTest, AssignStartSucceedRecordsEveryChange) {
  int64_t run = AddRun(0);
  ASSERT_GT(run, 0);
  auto a = Assign(run, 7);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->attempt(), 1u);
  EXPECT_FALSE(a->resume());
  EXPECT_EQ(a->resolved_spec(), "model: {}");
  EXPECT_EQ(Assign(run, 8).status().code(), absl::StatusCode::kFailedPrecondition);  // No longer QUEUED.
  ASSERT_TRUE(store_->Write([&](Database* db) { return MarkRunning(db, Attempt(run, 1), 3); }).ok());
  ASSERT_TRUE(Complete(run, 1, v1::SUCCEEDED).ok());
  RunRecord r = Load(run);
  EXPECT_EQ(r.run.state(), v1::SUCCEEDED);
  EXPECT_EQ(r.run.worker_id(), 7);
  EXPECT_EQ(r.run.final_metrics().at("top1"), 0.5);
  std::vector<v1::StateChange> history;
  ASSERT_TRUE(store_
                  ->Read([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(history, StateHistory(db, run));
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0].to(), v1::ASSIGNED);
  EXPECT_EQ(history[1].to(), v1::RUNNING);
  EXPECT_EQ(history[2].to(), v1::SUCCEEDED);
  EXPECT_LT(history[0].seq(), history[1].seq());
}

TEST_F(RunStateTest, StaleAttemptIsFenced) {
  int64_t run = AddRun(2);
  ASSERT_TRUE(Assign(run, 1).ok());
  ASSERT_TRUE(Complete(run, 1, v1::FAILED).ok());  // Requeued: retries remain.
  RunRecord r = Load(run);
  EXPECT_EQ(r.run.state(), v1::QUEUED);
  EXPECT_EQ(r.retries_used, 1u);
  EXPECT_EQ(r.run.worker_id(), 0);
  EXPECT_NE(r.run.message().find("exit code 3"), std::string::npos) << r.run.message();
  auto a = Assign(run, 2);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->attempt(), 2u);
  EXPECT_TRUE(a->resume());
  // The first worker's late reports carry attempt 1 and are refused.
  absl::Status start = store_->Write([&](Database* db) { return MarkRunning(db, Attempt(run, 1), 3); });
  EXPECT_EQ(start.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(start.message().find("stale"), std::string::npos);
  EXPECT_EQ(Complete(run, 1, v1::SUCCEEDED).code(), absl::StatusCode::kFailedPrecondition);
  absl::Status metric = store_->Write([&](Database* db) -> absl::Status {
    NM_RETURN_IF_ERROR(CheckAttempt(db, Attempt(run, 1)).status());
    return AppendMetric(db, run, 1, v1::MetricPoint(), 4).status();
  });
  EXPECT_EQ(metric.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Load(run).run.state(), v1::ASSIGNED);
  EXPECT_TRUE(Complete(run, 2, v1::SUCCEEDED).ok());
}

TEST_F(RunStateTest, RetriesExhaustedFails) {
  int64_t run = AddRun(1);
  ASSERT_TRUE(Assign(run, 1).ok());
  ASSERT_TRUE(Complete(run, 1, v1::FAILED).ok());
  ASSERT_TRUE(Assign(run, 1).ok());
  ASSERT_TRUE(Complete(run, 2, v1::FAILED).ok());
  RunRecord r = Load(run);
  EXPECT_EQ(r.run.state(), v1::FAILED);
  EXPECT_NE(r.run.message().find("no retries left"), std::string::npos) << r.run.message();
  EXPECT_GT(r.run.finished_at_ms(), 0);
}

// A bad spec (nmtrain's exit 2) fails every attempt alike: the run ends FAILED at once, its retries unspent.
// Other failures (a data error, exit 3, above) use the retry budget.
TEST_F(RunStateTest, PermanentExitFailsAtOnceWhateverRetriesRemain) {
  int64_t run = AddRun(4);
  ASSERT_TRUE(Assign(run, 1).ok());
  v1::CompleteRunRequest req;
  *req.mutable_run() = Attempt(run, 1);
  req.set_outcome(v1::FAILED);
  req.set_exit_code(2);
  req.set_message("rank 0 exited with code 2 (bad spec): model.name: unknown model 'vit_huge'");
  ASSERT_TRUE(store_->Write([&](Database* db) { return CompleteAttempt(db, req, 5); }).ok());
  RunRecord r = Load(run);
  EXPECT_EQ(r.run.state(), v1::FAILED);
  EXPECT_EQ(r.retries_used, 0u);
  EXPECT_EQ(r.run.attempt(), 1u);
  EXPECT_EQ(r.run.message(),
            "attempt 1 failed (exit code 2, bad spec: not retried): rank 0 exited with code 2 (bad spec): "
            "model.name: unknown model 'vit_huge'");
  EXPECT_GT(r.run.finished_at_ms(), 0);
}

TEST_F(RunStateTest, CancelQueuedAtOnceRunningViaWorker) {
  int64_t queued = AddRun(0);
  auto c = store_->Write([&](Database* db) { return CancelRun(db, queued, "by test", 9).status(); });
  ASSERT_TRUE(c.ok()) << c;
  EXPECT_EQ(Load(queued).run.state(), v1::CANCELLED);
  EXPECT_EQ(store_->Write([&](Database* db) { return CancelRun(db, queued, "again", 9).status(); }).code(),
            absl::StatusCode::kFailedPrecondition);

  int64_t running = AddRun(3);
  ASSERT_TRUE(Assign(running, 1).ok());
  ASSERT_TRUE(store_->Write([&](Database* db) { return MarkRunning(db, Attempt(running, 1), 3); }).ok());
  ASSERT_TRUE(
      store_->Write([&](Database* db) { return CancelRun(db, running, "by test", 9).status(); }).ok());
  RunRecord r = Load(running);
  EXPECT_EQ(r.run.state(), v1::RUNNING);
  EXPECT_TRUE(r.cancel_requested);
  // Losing the worker now ends it CANCELLED rather than requeueing it.
  ASSERT_TRUE(store_->Write([&](Database* db) { return LoseAttempt(db, r, "worker gone", 10); }).ok());
  EXPECT_EQ(Load(running).run.state(), v1::CANCELLED);
}

TEST_F(RunStateTest, ResumeRequeuesCancelledAndFailedRunsOnly) {
  int64_t run = AddRun(0);
  auto resume = [&](int64_t id) {
    return store_->Write(
        [&](Database* db) { return RequeueForResume(db, id, "resumed by 'alice'", 20).status(); });
  };
  absl::Status queued = resume(run);
  EXPECT_EQ(queued.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(queued.message().find("run " + std::to_string(run) + " is QUEUED"), std::string::npos) << queued;
  // A run that failed with no retries left, then is resumed: QUEUED with its retry budget back, and the
  // next assignment is attempt 2, which resumes.
  ASSERT_TRUE(Assign(run, 1).ok());
  ASSERT_TRUE(Complete(run, 1, v1::FAILED).ok());
  ASSERT_EQ(Load(run).run.state(), v1::FAILED);
  ASSERT_TRUE(resume(run).ok());
  RunRecord r = Load(run);
  EXPECT_EQ(r.run.state(), v1::QUEUED);
  EXPECT_EQ(r.run.attempt(), 1u);
  EXPECT_EQ(r.retries_used, 0u);
  EXPECT_EQ(r.run.finished_at_ms(), 0);
  EXPECT_EQ(r.run.message(), "resumed by 'alice'");
  auto a = Assign(run, 2);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->attempt(), 2u);
  EXPECT_TRUE(a->resume());
  EXPECT_EQ(a->init_from_run(), 0);
  ASSERT_TRUE(Complete(run, 2, v1::SUCCEEDED).ok());
  absl::Status done = resume(run);
  EXPECT_EQ(done.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(done.message().find("is SUCCEEDED: only a CANCELLED or FAILED run can be resumed"),
            std::string::npos)
      << done;
  // A cancel requested while running does not outlive the resume.
  int64_t cancelled = AddRun(0);
  ASSERT_TRUE(Assign(cancelled, 1).ok());
  ASSERT_TRUE(store_->Write([&](Database* db) { return MarkRunning(db, Attempt(cancelled, 1), 3); }).ok());
  ASSERT_TRUE(store_->Write([&](Database* db) { return CancelRun(db, cancelled, "test", 9).status(); }).ok());
  ASSERT_TRUE(Complete(cancelled, 1, v1::CANCELLED).ok());
  // A resubmission of its spec is told about it (SubmitSweep's answer notes it).
  ASSERT_TRUE(store_
                  ->Read([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(std::optional<ResumableRun> earlier, FindResumable(db, "h"));
                    EXPECT_TRUE(earlier.has_value() && earlier->run_id == cancelled &&
                                earlier->state == v1::CANCELLED);
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE(resume(cancelled).ok());
  EXPECT_FALSE(Load(cancelled).cancel_requested);
  std::vector<v1::StateChange> history;
  ASSERT_TRUE(store_
                  ->Read([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(history, StateHistory(db, cancelled));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(history.back().from(), v1::CANCELLED);
  EXPECT_EQ(history.back().to(), v1::QUEUED);
  EXPECT_EQ(history.back().reason(), "resumed by 'alice'");
}

TEST_F(RunStateTest, EventsShareOneSequence) {
  int64_t run = AddRun(0);
  ASSERT_TRUE(Assign(run, 1).ok());
  std::vector<v1::RunEvent> events;
  ASSERT_TRUE(store_
                  ->Write([&](Database* db) -> absl::Status {
                    v1::MetricPoint p;
                    (*p.mutable_values())["loss"] = 1.0;
                    NM_RETURN_IF_ERROR(AppendMetric(db, run, 1, p, 3).status());
                    google::protobuf::RepeatedPtrField<v1::LogLine> lines;
                    lines.Add()->set_text("hello");
                    lines.Add()->set_text("world");
                    NM_RETURN_IF_ERROR(AppendLogs(db, run, 1, lines, 3).status());
                    NM_ASSIGN_OR_RETURN(events, EventsFrom(db, run, 0, 0));
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_EQ(events.size(), 4u);  // ASSIGNED, metric, two logs.
  EXPECT_TRUE(events[0].has_state());
  EXPECT_TRUE(events[1].has_metric());
  EXPECT_EQ(events[3].log().text(), "world");
  for (size_t i = 1; i < events.size(); ++i) {
    auto seq = [](const v1::RunEvent& e) {
      return e.has_metric() ? e.metric().seq() : e.has_state() ? e.state().seq() : e.log().seq();
    };
    EXPECT_EQ(seq(events[i]), seq(events[i - 1]) + 1);
  }
}

// The per-run caps of docs/reliability.md: lines past the cap are dropped, one notice line counts them.
class EventCapsTest : public RunStateTest {
 protected:
  // Appends `n` log lines "line K" and returns how many were stored.
  int64_t Log(int64_t run, int n, const EventCaps& caps) {
    google::protobuf::RepeatedPtrField<v1::LogLine> lines;
    for (int i = 0; i < n; ++i) lines.Add()->set_text(absl::StrCat("line ", next_line_++));
    int64_t stored = -1;
    EXPECT_TRUE(store_
                    ->Write([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(stored, AppendLogs(db, run, 1, lines, 3, caps));
                      return absl::OkStatus();
                    })
                    .ok());
    return stored;
  }

  // Appends one point of `kind` and returns its seq (0: dropped).
  int64_t Metric(int64_t run, const std::string& kind, const EventCaps& caps) {
    v1::MetricPoint p;
    p.set_kind(kind);
    int64_t seq = -1;
    EXPECT_TRUE(store_
                    ->Write([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(seq, AppendMetric(db, run, 1, p, 3, caps));
                      return absl::OkStatus();
                    })
                    .ok());
    return seq;
  }

  template <typename T>
  std::vector<T> Read(const std::function<absl::StatusOr<std::vector<T>>(Database*)>& query) {
    std::vector<T> out;
    EXPECT_TRUE(store_
                    ->Read([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(out, query(db));
                      return absl::OkStatus();
                    })
                    .ok());
    return out;
  }

  std::vector<v1::LogLine> Logs(int64_t run) {
    return Read<v1::LogLine>([run](Database* db) { return LogLines(db, run, 0, 0); });
  }

  int next_line_ = 0;
};

std::string LogNotice(int64_t dropped, int64_t limit) {
  return absl::StrCat(
      "[nmserver] ", limits::FormatCount(dropped),
      " log line(s) dropped here, between the run's first lines and its latest (the limit is ",
      limits::FormatCount(limit),
      " stored log lines, nmserver --max_log_lines_per_run; a worker whose outbox is full drops "
      "lines too)");
}

std::vector<std::string> Texts(const std::vector<v1::LogLine>& logs) {
  std::vector<std::string> texts;
  for (const v1::LogLine& l : logs) texts.push_back(l.text());
  return texts;
}

// A flood past the cap keeps its first lines (half the cap) and its latest, with one notice between them
// counting exactly the lines not kept (issue 36: the count said 34,320 where 50,000 were lost).
TEST_F(EventCapsTest, AFloodKeepsItsHeadAndItsTailAndCountsTheLinesBetween) {
  int64_t run = AddRun(0);
  EventCaps caps;
  caps.max_log_lines = 4;
  EXPECT_EQ(Log(run, 3, caps), 3);
  EXPECT_EQ(Log(run, 7, caps), 7);  // Each line past the cap evicts the oldest line after the notice.
  EXPECT_EQ(Texts(Logs(run)),
            (std::vector<std::string>{"line 0", "line 1", LogNotice(6, 4), "line 8", "line 9"}));
  EXPECT_EQ(Log(run, 2, caps), 2);
  EXPECT_EQ(Texts(Logs(run)),
            (std::vector<std::string>{"line 0", "line 1", LogNotice(8, 4), "line 10", "line 11"}));
}

// Lines the worker dropped (its outbox was full) are counted where they were: the head ends there, and a
// later gap drops the lines stored after the notice too, so that the notice is followed by the latest lines.
TEST_F(EventCapsTest, LinesTheWorkerDroppedAreCountedInTheNotice) {
  int64_t run = AddRun(0);
  auto send = [&](uint64_t first, uint64_t last, uint64_t dropped_before) {
    google::protobuf::RepeatedPtrField<v1::LogLine> lines;
    for (uint64_t id = first; id <= last; ++id) {
      v1::LogLine* line = lines.Add();
      line->set_text(absl::StrCat("line ", id));
      line->set_report_id(id);
      if (id == first) line->set_dropped_before(dropped_before);
    }
    int64_t stored = -1;
    EXPECT_TRUE(store_
                    ->Write([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(stored, AppendLogs(db, run, 1, lines, 3));
                      return absl::OkStatus();
                    })
                    .ok());
    return stored;
  };
  EXPECT_EQ(send(1, 3, 0), 3);
  EXPECT_EQ(send(4, 6, 5), 3);
  EXPECT_EQ(send(4, 6, 5), 0);  // Sent again: neither stored nor counted twice.
  const int64_t limit = limits::kDefaultMaxLogLinesPerRun;
  EXPECT_EQ(Texts(Logs(run)), (std::vector<std::string>{"line 1", "line 2", "line 3", LogNotice(5, limit),
                                                        "line 4", "line 5", "line 6"}));
  EXPECT_EQ(send(7, 7, 2), 1);
  EXPECT_EQ(Texts(Logs(run)),
            (std::vector<std::string>{"line 1", "line 2", "line 3", LogNotice(10, limit), "line 7"}));
}

TEST_F(EventCapsTest, MetricPointsPastTheCapAreDroppedButFinalIsKept) {
  int64_t run = AddRun(0);
  EventCaps caps;
  caps.max_metric_points = 2;
  EXPECT_GT(Metric(run, "epoch", caps), 0);
  EXPECT_GT(Metric(run, "step", caps), 0);
  EXPECT_EQ(Metric(run, "epoch", caps), 0);
  EXPECT_EQ(Metric(run, "step", caps), 0);
  EXPECT_GT(Metric(run, "final", caps), 0);  // A run's final metrics are never dropped.
  std::vector<v1::MetricPoint> points =
      Read<v1::MetricPoint>([run](Database* db) { return MetricPoints(db, run, 0); });
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[2].kind(), "final");
  std::vector<v1::LogLine> logs = Logs(run);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].text(),
            "[nmserver] 2 metric point(s) dropped: this run reached the limit of 2 stored metric points "
            "(nmserver --max_metric_points_per_run)");
}

// A progress point every few seconds over days of training must not fill the cap: the store keeps only the
// attempt's latest one, outside the count.
TEST_F(EventCapsTest, ProgressPointsReplaceEachOtherAndDoNotFillTheCap) {
  int64_t run = AddRun(0);
  EventCaps caps;
  caps.max_metric_points = 2;
  int64_t last_progress = 0;
  for (int i = 0; i < 10; ++i) last_progress = Metric(run, "progress", caps);
  EXPECT_GT(last_progress, 0);
  EXPECT_GT(Metric(run, "step", caps), 0);
  EXPECT_GT(Metric(run, "epoch", caps), 0);
  std::vector<v1::MetricPoint> points =
      Read<v1::MetricPoint>([run](Database* db) { return MetricPoints(db, run, 0); });
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].kind(), "progress");
  EXPECT_EQ(points[0].seq(), last_progress);
  EXPECT_TRUE(Logs(run).empty());  // Nothing was dropped.
}

// A worker sends a batch again when its answer was lost, possibly with more lines behind it: each numbered
// line is stored once, in order; unnumbered lines (older workers) are stored as sent.
TEST_F(EventCapsTest, NumberedLogLinesSentAgainAreStoredOnce) {
  int64_t run = AddRun(0);
  auto send = [&](uint64_t first, uint64_t last) {
    google::protobuf::RepeatedPtrField<v1::LogLine> lines;
    for (uint64_t id = first; id <= last; ++id) {
      v1::LogLine* line = lines.Add();
      line->set_text(absl::StrCat("line ", id));
      line->set_report_id(id);
    }
    int64_t stored = -1;
    EXPECT_TRUE(store_
                    ->Write([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(stored, AppendLogs(db, run, 1, lines, 3));
                      return absl::OkStatus();
                    })
                    .ok());
    return stored;
  };
  EXPECT_EQ(send(1, 3), 3);
  EXPECT_EQ(send(1, 3), 0);  // The same batch again.
  EXPECT_EQ(send(2, 6), 3);  // Again with more behind it: only 4..6 are new.
  std::vector<v1::LogLine> logs = Logs(run);
  ASSERT_EQ(logs.size(), 6u);
  for (size_t i = 0; i < logs.size(); ++i) EXPECT_EQ(logs[i].text(), absl::StrCat("line ", i + 1));
  EXPECT_EQ(Log(run, 2, EventCaps{}), 2);  // Unnumbered lines are not checked.
}

TEST_F(EventCapsTest, ALongLineIsStoredCut) {
  int64_t run = AddRun(0);
  google::protobuf::RepeatedPtrField<v1::LogLine> lines;
  const std::string text(limits::kMaxLogLineBytes + 10, 'a');
  lines.Add()->set_text(text);
  ASSERT_TRUE(store_->Write([&](Database* db) { return AppendLogs(db, run, 1, lines, 3).status(); }).ok());
  std::vector<v1::LogLine> logs = Logs(run);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].text(), limits::CutLogLine(text));
}

// Storage failures answer with the codes clients retry, say SQLite's reason, and are remembered (the lease
// manager counts leases from the last one); other errors stay INTERNAL.
TEST(StoreTest, StorageFailuresAreTransientAndRemembered) {
  auto opened = Store::Open(TempPath("storage-failures"));
  ASSERT_TRUE(opened.ok());
  Store& store = **opened;
  const auto insert_sweep = [&store](const std::string& name) {
    return store.Write([&](Database* db) -> absl::Status {
      v1::SweepSpec spec;
      spec.set_name(name);
      return InsertSweep(db, spec, 1, {}).status();
    });
  };
  ASSERT_TRUE(insert_sweep("before").ok());
  EXPECT_EQ(store.last_storage_failure_ms(), 0);

  // A full disk: the file may not grow by a page.
  ASSERT_TRUE(store
                  .Read([](Database* db) {
                    const int64_t pages = Count(db, "PRAGMA page_count");
                    return db->Exec(absl::StrCat("PRAGMA max_page_count = ", pages));
                  })
                  .ok());
  const absl::Status full = insert_sweep(std::string(200000, 'x'));
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  EXPECT_NE(full.message().find("database or disk is full"), std::string::npos) << full;
  EXPECT_TRUE(IsStorageFailure(full));
  EXPECT_GT(store.last_storage_failure_ms(), 0);
  ASSERT_TRUE(store.Read([](Database* db) { return db->Exec("PRAGMA max_page_count = 1073741823"); }).ok());

  // A read-only file.
  ASSERT_TRUE(store.Read([](Database* db) { return db->Exec("PRAGMA query_only = 1"); }).ok());
  const absl::Status read_only = insert_sweep("read-only");
  EXPECT_EQ(read_only.code(), absl::StatusCode::kUnavailable) << read_only;
  EXPECT_TRUE(IsStorageFailure(read_only));
  ASSERT_TRUE(store.Read([](Database* db) { return db->Exec("PRAGMA query_only = 0"); }).ok());

  // Not storage: a broken constraint is the caller's bug, and the code says so.
  const int64_t last_failure = store.last_storage_failure_ms();
  const absl::Status constraint = store.Write(
      [](Database* db) { return db->Exec("INSERT INTO schema_version (version) VALUES (NULL)"); });
  EXPECT_EQ(constraint.code(), absl::StatusCode::kInternal) << constraint;
  EXPECT_FALSE(IsStorageFailure(constraint));
  EXPECT_EQ(store.last_storage_failure_ms(), last_failure);

  std::vector<v1::Sweep> sweeps;
  ASSERT_TRUE(store
                  .Read([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(sweeps, ListSweeps(db));
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_EQ(sweeps.size(), 1u);  // Nothing of the failed writes was stored.
  EXPECT_EQ(sweeps[0].name(), "before");
  EXPECT_TRUE(insert_sweep("after").ok());
}

// A metric point is found by its attempt, kind, epoch and step: what the gateway checks before storing a
// report sent again.
TEST_F(RunStateTest, StoredMetricSeqFindsThePointOfTheSameTrainerLine) {
  int64_t run = AddRun(0);
  ASSERT_TRUE(Assign(run, 1).ok());
  v1::MetricPoint step;
  step.set_kind("step");
  step.set_epoch(0);
  step.set_step(10);
  int64_t seq = 0, again = 0, other_step = 0, other_attempt = 0;
  ASSERT_TRUE(store_
                  ->Write([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(seq, AppendMetric(db, run, 1, step, 4));
                    NM_ASSIGN_OR_RETURN(again, StoredMetricSeq(db, run, 1, step));
                    v1::MetricPoint later = step;
                    later.set_step(20);
                    NM_ASSIGN_OR_RETURN(other_step, StoredMetricSeq(db, run, 1, later));
                    NM_ASSIGN_OR_RETURN(other_attempt, StoredMetricSeq(db, run, 2, step));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_GT(seq, 0);
  EXPECT_EQ(again, seq);
  EXPECT_EQ(other_step, 0);
  EXPECT_EQ(other_attempt, 0);
}

TEST(StoreTest, FailedWriteRollsBackEverything) {
  auto store = Store::Open(TempPath("rollback"));
  ASSERT_TRUE(store.ok());
  absl::Status s = (*store)->Write([](Database* db) -> absl::Status {
    v1::SweepSpec spec;
    NM_RETURN_IF_ERROR(InsertSweep(db, spec, 1, {}).status());
    return absl::InvalidArgumentError("stop");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  std::vector<v1::Sweep> sweeps;
  ASSERT_TRUE((*store)
                  ->Read([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(sweeps, ListSweeps(db));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_TRUE(sweeps.empty());
}

}  // namespace
}  // namespace nmsparse::server

namespace nmsparse::server {
namespace {

// The per-event handlers read a sweep without its grid axes: everything else round-trips.
TEST(SweepTableTest, LoadSweepWithoutGridKeepsEveryOtherField) {
  auto store = Store::Open(TempPath("without_grid"));
  ASSERT_TRUE(store.ok());
  v1::SweepSpec spec;
  spec.set_name("g");
  spec.set_base("seed: 7\n");
  for (int i = 0; i < 3; ++i) {
    v1::AxisValue* v = spec.add_grid()->add_values();
    v->set_label(absl::StrCat(i));
    (*v->mutable_set())["seed"] = absl::StrCat(i);
  }
  spec.mutable_early_stopping()->set_policy("asha");
  spec.mutable_search()->set_algorithm("tpe");
  spec.add_random()->set_key("optimizer.lr");
  spec.set_max_retries(2);
  absl::Status s = (*store)->Write([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(int64_t id, InsertSweep(db, spec, 1, {}));
    NM_ASSIGN_OR_RETURN(v1::Sweep full, LoadSweep(db, id));
    NM_ASSIGN_OR_RETURN(v1::Sweep lean, LoadSweepWithoutGrid(db, id));
    EXPECT_EQ(full.spec().grid_size(), 3);
    v1::SweepSpec expected = spec;
    expected.clear_grid();
    EXPECT_EQ(lean.spec().SerializeAsString(), expected.SerializeAsString());
    EXPECT_EQ(lean.name(), "g");
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace nmsparse::server
