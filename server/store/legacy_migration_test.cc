// Migration 13 on a database written by the nmserver and nmctl of wire version 1 (testdata/
// make_schema12_wire1_db.sh): every run keeps its spec text, content hash and history, the runs' copies of
// their specs as messages go, and every sweep's base, rewritten as YAML, expands into the same runs again.
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "schemas/sweep.h"
#include "server/store/run_table.h"
#include "server/store/sqlite.h"
#include "common/status_macros.h"
#include "server/store/store.h"
#include "server/store/sweep_table.h"

namespace nmsparse::server {
namespace {

constexpr char kOldDb[] = "server/store/testdata/schema12_wire1.db";

struct StoredRun {
  int64_t sweep_id = 0;
  int index = 0;
  std::string content_hash;
  std::string resolved_spec;
  std::string history;  // Its state changes, one "seq from to attempt reason" line each.
};

// The runs as the rows hold them, read with SQL alone (no code of this version's store).
std::map<int64_t, StoredRun> ReadRuns(Database* db) {
  std::map<int64_t, StoredRun> runs;
  auto st = db->Prepare("SELECT id, sweep_id, idx, content_hash, resolved_spec FROM runs");
  EXPECT_TRUE(st.ok()) << st.status();
  while (st.ok() && *(*st)->Step()) {
    runs[(*st)->Int(0)] = {(*st)->Int(1), static_cast<int>((*st)->Int(2)), (*st)->Text(3), (*st)->Text(4),
                           ""};
  }
  auto changes = db->Prepare("SELECT run_id, seq, from_state, to_state, attempt, reason FROM state_changes");
  EXPECT_TRUE(changes.ok()) << changes.status();
  while (changes.ok() && *(*changes)->Step()) {
    absl::StrAppend(&runs[(*changes)->Int(0)].history, (*changes)->Int(1), " ", (*changes)->Int(2), " ",
                    (*changes)->Int(3), " ", (*changes)->Int(4), " ", (*changes)->Text(5), "\n");
  }
  return runs;
}

std::string CopyOfOldDb() {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir ? dir : "/tmp", "/schema12_wire1.db");
  std::ifstream in(kOldDb, std::ios::binary);
  EXPECT_TRUE(in.good()) << kOldDb;
  std::ofstream(path, std::ios::binary) << in.rdbuf();
  return path;
}

TEST(LegacyMigrationTest, EveryRunKeepsItsSpecHashAndHistory) {
  const std::string path = CopyOfOldDb();
  std::map<int64_t, StoredRun> before;
  {
    auto db = Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    before = ReadRuns(db->get());
  }
  ASSERT_EQ(before.size(), 17u);  // As the script wrote them.
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::Status read = (*store)->Read([&](Database* db) -> absl::Status {
    EXPECT_EQ(ReadRuns(db).size(), before.size());
    for (const auto& [id, old] : ReadRuns(db)) {
      const StoredRun& was = before.at(id);
      EXPECT_EQ(old.content_hash, was.content_hash) << "run " << id;
      EXPECT_EQ(old.resolved_spec, was.resolved_spec) << "run " << id;
      EXPECT_EQ(old.history, was.history) << "run " << id;
      NM_ASSIGN_OR_RETURN(RunRecord run, LoadRun(db, id, RunDetail::kFull));
      EXPECT_EQ(run.run.resolved_spec(), was.resolved_spec) << "run " << id;
      EXPECT_EQ(run.run.content_hash(), was.content_hash) << "run " << id;
    }
    NM_ASSIGN_OR_RETURN(Stmt columns,
                        db->Prepare("SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name = 'spec'"));
    NM_ASSIGN_OR_RETURN(bool row, columns->Step());
    EXPECT_TRUE(row && columns->Int(0) == 0) << "runs.spec is still there";
    return absl::OkStatus();
  });
  ASSERT_TRUE(read.ok()) << read;
}

// The bases, as YAML now, expand into the runs the sweeps stored (the search sweep's runs were proposed, so
// its base is only read back): the QKV ratio that followed N:M still follows it, the one set apart stays.
TEST(LegacyMigrationTest, EverySweepExpandsIntoItsStoredRuns) {
  const std::string path = CopyOfOldDb();
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::Status read = (*store)->Read([&](Database* db) -> absl::Status {
    const std::map<int64_t, StoredRun> runs = ReadRuns(db);
    for (int64_t sweep_id = 1; sweep_id <= 7; ++sweep_id) {
      NM_ASSIGN_OR_RETURN(v1::Sweep sweep, LoadSweep(db, sweep_id));
      EXPECT_FALSE(sweep.spec().base().empty()) << "sweep " << sweep_id;
      const absl::StatusOr<ExperimentConfig> base = ParseExperimentYaml(sweep.spec().base(), "base");
      EXPECT_TRUE(base.ok()) << "sweep " << sweep_id << ": " << base.status();
      if (!sweep.spec().search().algorithm().empty()) continue;
      absl::StatusOr<std::vector<ResolvedRun>> expanded = ExpandSweep(sweep.spec());
      EXPECT_TRUE(expanded.ok()) << "sweep " << sweep_id << ": " << expanded.status();
      if (!expanded.ok()) continue;
      int compared = 0;
      for (const auto& [id, run] : runs) {
        if (run.sweep_id != sweep_id) continue;
        ++compared;
        if (run.index >= static_cast<int>(expanded->size()))
          return absl::OutOfRangeError(absl::StrCat("run ", id, " past the expansion"));
        const ResolvedRun& again = (*expanded)[run.index];
        EXPECT_EQ(again.canonical_yaml, run.resolved_spec) << "run " << id;
        EXPECT_EQ(again.content_hash, run.content_hash) << "run " << id;
      }
      EXPECT_EQ(compared, static_cast<int>(expanded->size())) << "sweep " << sweep_id;
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(read.ok()) << read;
}

}  // namespace
}  // namespace nmsparse::server
