// The per-sweep run counts (migration 8) equal a recount of the runs after every kind of change: random
// transitions of the state machine, forks and reused runs, writes rolled back, restarts, and an upgrade of a
// database written before the counts existed.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "server/store/migrations.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/store.h"
#include "server/store/sweep_table.h"

namespace nmsparse::server {
namespace {

using Counts = std::map<std::pair<int64_t, int>, int64_t>;  // (sweep, state) -> runs; zeros left out.

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(dir ? dir : "/tmp", "/", name, "-", getpid(), ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

Counts Query(Database* db, const std::string& sql) {
  Counts out;
  auto st = db->Prepare(sql);
  EXPECT_TRUE(st.ok()) << st.status();
  if (!st.ok()) return out;
  while (true) {
    auto row = (*st)->Step();
    EXPECT_TRUE(row.ok()) << row.status();
    if (!row.ok() || !*row) break;
    if ((*st)->Int(2) != 0) out[{(*st)->Int(0), static_cast<int>((*st)->Int(1))}] = (*st)->Int(2);
  }
  return out;
}

Counts Kept(Database* db) { return Query(db, "SELECT sweep_id, state, n FROM sweep_run_counts"); }
Counts Recount(Database* db) {
  return Query(db, "SELECT sweep_id, state, COUNT(*) FROM runs GROUP BY sweep_id, state");
}

// What LoadSweep reports, as the same map.
Counts Loaded(Database* db, int64_t sweeps) {
  Counts out;
  for (int64_t id = 1; id <= sweeps; ++id) {
    auto sweep = LoadSweep(db, id);
    EXPECT_TRUE(sweep.ok()) << sweep.status();
    if (!sweep.ok()) continue;
    for (const auto& [name, n] : sweep->run_counts()) {
      v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
      EXPECT_TRUE(v1::RunState_Parse(name, &state)) << name;
      out[{id, static_cast<int>(state)}] = n;
    }
  }
  return out;
}

class RunCountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath("runcounts");
    Reopen();
  }

  void Reopen() {
    store_.reset();
    auto s = Store::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }

  void ExpectCountsMatch(const std::string& after, int64_t sweeps) {
    ASSERT_TRUE(store_
                    ->Read([&](Database* db) -> absl::Status {
                      const Counts recount = Recount(db);
                      EXPECT_EQ(Kept(db), recount) << "after " << after;
                      EXPECT_EQ(Loaded(db, sweeps), recount) << "after " << after;
                      return absl::OkStatus();
                    })
                    .ok());
  }

  // One random change to a random run; refusals (a run in the wrong state) are part of the walk.
  std::string Step(std::mt19937& rng, int64_t runs) {
    const int64_t id = std::uniform_int_distribution<int64_t>(1, runs)(rng);
    const int op = std::uniform_int_distribution<int>(0, 8)(rng);
    std::string what;
    absl::Status s = store_->Write([&](Database* db) -> absl::Status {
      NM_ASSIGN_OR_RETURN(RunRecord run, LoadRun(db, id, RunDetail::kSummary));
      v1::RunAttempt ra;
      ra.set_run_id(id);
      ra.set_attempt(run.run.attempt());
      v1::CompleteRunRequest req;
      *req.mutable_run() = ra;
      switch (op) {
        case 0:
          what = "assign";
          return AssignRun(db, id, 1, {0}, 2).status();
        case 1:
          what = "start";
          return MarkRunning(db, ra, 3);
        case 2:
        case 3: {
          static constexpr v1::RunState kOutcomes[] = {v1::SUCCEEDED, v1::FAILED, v1::CANCELLED, v1::QUEUED};
          req.set_outcome(kOutcomes[std::uniform_int_distribution<int>(0, 3)(rng)]);
          req.set_exit_code(req.outcome() == v1::FAILED ? 3 : 0);
          what = absl::StrCat("complete ", v1::RunState_Name(req.outcome()));
          NM_RETURN_IF_ERROR(CheckAttempt(db, ra).status());
          return CompleteAttempt(db, req, 4);
        }
        case 4:
          what = "lose";
          if (!IsActive(run.run.state())) return absl::OkStatus();
          return LoseAttempt(db, run, "worker lost", 5);
        case 5:
          what = "hand back";
          if (!IsActive(run.run.state())) return absl::OkStatus();
          return HandBackAttempt(db, run, "worker leaving", 5);
        case 6:
          what = "cancel";
          return CancelRun(db, id, "user", 6).status();
        case 7:
          what = "stop early";
          if (IsFinal(run.run.state())) return absl::OkStatus();
          return StopRunEarly(db, run, "rung 0", 7);
        default:
          what = "resume";
          return RequeueForResume(db, id, "user", 8).status();
      }
    });
    EXPECT_TRUE(s.ok() || absl::IsFailedPrecondition(s)) << what << " of run " << id << ": " << s;
    return absl::StrCat(what, " of run ", id);
  }

  std::string path_;
  std::unique_ptr<Store> store_;
};

NewRun MakeRun(uint32_t index, uint32_t max_retries) {
  NewRun r;
  r.index = index;
  r.content_hash = absl::StrCat("h", index);
  r.resolved_spec = "model: {}";
  r.max_retries = max_retries;
  return r;
}

TEST_F(RunCountsTest, EqualARecountThroughRandomTransitionsForksRollbacksAndRestarts) {
  constexpr int kSweeps = 3;
  constexpr int kRunsPerSweep = 12;
  ASSERT_TRUE(store_
                  ->Write([&](Database* db) -> absl::Status {
                    for (int s = 0; s < kSweeps; ++s) {
                      v1::SweepSpec spec;
                      spec.set_name(absl::StrCat("s", s));
                      NM_ASSIGN_OR_RETURN(int64_t sweep, InsertSweep(db, spec, 1, {}));
                      for (int i = 0; i < kRunsPerSweep; ++i) {
                        NM_RETURN_IF_ERROR(InsertRun(db, sweep, MakeRun(i, i % 3), 1, nullptr).status());
                      }
                    }
                    return absl::OkStatus();
                  })
                  .ok());
  int64_t runs = kSweeps * kRunsPerSweep;
  ExpectCountsMatch("submission", kSweeps);
  std::mt19937 rng(29);
  for (int i = 0; i < 600; ++i) {
    std::string what = Step(rng, runs);
    if (i % 50 == 49) {  // A fork (QUEUED) and a reused result (SUCCEEDED) join a sweep.
      ASSERT_TRUE(store_
                      ->Write([&](Database* db) -> absl::Status {
                        NewRun fork = MakeRun(100 + i, 1);
                        fork.lineage.set_parent_run_id(1 + i % runs);
                        NM_RETURN_IF_ERROR(InsertRun(db, 1 + i % kSweeps, fork, 9, nullptr).status());
                        ReuseSource reuse{1, ""};
                        return InsertRun(db, 1 + (i + 1) % kSweeps, MakeRun(200 + i, 0), 9, &reuse).status();
                      })
                      .ok());
      runs += 2;
      what += ", a fork and a reused run";
    }
    if (i % 40 == 39) {  // A write that changes states, then fails: rolled back, counts included.
      absl::Status s = store_->Write([&](Database* db) -> absl::Status {
        NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE runs SET state = ? WHERE sweep_id = 1"));
        NM_RETURN_IF_ERROR(st->Bind(1, static_cast<int>(v1::CANCELLED)).Run());
        return absl::InternalError("fails after the change");
      });
      ASSERT_FALSE(s.ok());
      what += ", a rolled-back write";
    }
    if (i % 100 == 99) {
      Reopen();
      what += ", a restart";
    }
    ExpectCountsMatch(what, kSweeps);
    if (HasFailure()) return;
  }
  std::set<int> states;  // The walk went through the state machine, not only its refusals.
  ASSERT_TRUE(store_
                  ->Read([&](Database* db) -> absl::Status {
                    for (const auto& [key, n] : Recount(db)) states.insert(key.second);
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_GE(states.size(), 5u);
}

// A database written before the counts (schema 7) upgrades with its sweeps counted, and keeps them from then
// on.
TEST(RunCountsMigrationTest, AnOlderDatabaseIsCountedOnUpgrade) {
  const std::string path = TempPath("schema7");
  {
    auto db = Database::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE schema_version (version INTEGER NOT NULL)").ok());
    for (int v = 0; v < 7; ++v) {
      ASSERT_TRUE((*db)->Exec(Migrations()[v]).ok());
      ASSERT_TRUE(
          (*db)->Exec(absl::StrCat("INSERT INTO schema_version (version) VALUES (", v + 1, ")")).ok());
    }
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO sweeps (name, spec, priority, created_at_ms) VALUES ('a', '', 0, 1), "
                           "('b', '', 0, 1)")
                    .ok());
    for (int i = 0; i < 10; ++i) {
      const int sweep = i < 7 ? 1 : 2;
      const int state = i % 3 == 0 ? v1::SUCCEEDED : i % 3 == 1 ? v1::QUEUED : v1::FAILED;
      ASSERT_TRUE(
          (*db)
              ->Exec(absl::StrCat("INSERT INTO runs (sweep_id, idx, content_hash, state, gpus, "
                                  "resolved_spec, spec, priority, max_retries, created_at_ms) VALUES (",
                                  sweep, ", ", i, ", 'h', ", state, ", 1, '', '', 0, 0, 1)"))
              .ok());
    }
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::Status s = (*store)->Write([&](Database* db) -> absl::Status {
    EXPECT_EQ(Kept(db), Recount(db));
    NM_ASSIGN_OR_RETURN(v1::Sweep a, LoadSweep(db, 1));
    EXPECT_EQ(a.name(), "a");
    EXPECT_EQ(a.run_counts().at("SUCCEEDED"), 3u);             // Runs 0, 3, 6.
    EXPECT_EQ(a.run_counts().at("QUEUED"), 2u);                // Runs 1, 4.
    EXPECT_EQ(a.run_counts().at("FAILED"), 2u);                // Runs 2, 5.
    NM_RETURN_IF_ERROR(AssignRun(db, 2, 1, {0}, 2).status());  // Run idx 1: QUEUED -> ASSIGNED.
    NM_RETURN_IF_ERROR(InsertRun(db, 2, MakeRun(10, 0), 3, nullptr).status());
    EXPECT_EQ(Kept(db), Recount(db));
    NM_ASSIGN_OR_RETURN(std::vector<v1::Sweep> listed, ListSweeps(db));
    EXPECT_EQ(listed.at(1).run_counts().at("ASSIGNED"), 1u);
    EXPECT_EQ(listed.at(0).run_counts().at("QUEUED"), 2u);  // Sweep b: run idx 7 and the new one.
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace nmsparse::server
