// Issue 36: a database with damaged b-tree pages is refused when it is opened, naming the file (PRAGMA
// quick_check), instead of being found later by whichever request reads a bad page; and no status that can
// reach a client carries a statement's text (it rides as a payload, for nmserver's log).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "server/store/sqlite.h"
#include "server/store/store.h"

namespace nmsparse::server {
namespace {

constexpr int kPageBytes = 4096;  // SQLite's default page size, which Database::Open keeps.

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

// A store with a table of 400 rows of 200 bytes (about 25 pages), closed; then its last `pages` pages
// overwritten (page 1, the header and the schema, stays intact).
std::string DamagedDatabase(const std::string& name, int pages) {
  const std::string path = TempPath(name);
  {
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
    EXPECT_TRUE(store.ok()) << store.status();
    EXPECT_TRUE(
        (*store)
            ->Write([](Database* db) {
              return db->Exec(
                  "CREATE TABLE filler (x BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                  "FROM n WHERE i < 400) INSERT INTO filler SELECT randomblob(200) FROM n;");
            })
            .ok());
  }  // Closing the last connection folds the write-ahead log into the file.
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(0, std::ios::end);
  const std::streamoff size = file.tellg();
  EXPECT_GT(size, (pages + 1) * kPageBytes);
  file.seekp(size - pages * kPageBytes);
  file << std::string(pages * kPageBytes, '\xa5');
  return path;
}

TEST(IntegrityTest, DamagedBtreePagesAreRefusedAtOpenNamingTheFile) {
  const std::string path = DamagedDatabase("damaged_at_open.db", 2);
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_FALSE(store.ok()) << "a damaged database was opened";
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_TRUE(absl::StrContains(store.status().message(), path)) << store.status();
  EXPECT_TRUE(absl::StrContains(store.status().message(), "is damaged")) << store.status();
}

TEST(IntegrityTest, AnIntactDatabaseOpens) {
  const std::string path = TempPath("intact.db");
  ASSERT_TRUE(Store::Open(path).ok());
  absl::StatusOr<std::unique_ptr<Store>> again = Store::Open(path);
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(IntegrityTest, NoStatementTextInTheMessageOfADamagedRead) {
  // A damaged page read by a statement (the database opened without the check): DATA_LOSS, no SQL.
  const std::string path = DamagedDatabase("damaged_read.db", 2);
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<Stmt> count = (*db)->Prepare("SELECT sum(length(x)) FROM filler");
  ASSERT_TRUE(count.ok()) << count.status();
  absl::StatusOr<bool> row = (*count)->Step();
  ASSERT_FALSE(row.ok());
  EXPECT_EQ(row.status().code(), absl::StatusCode::kDataLoss) << row.status();
  EXPECT_FALSE(absl::StrContains(row.status().message(), "SELECT")) << row.status().message();
  EXPECT_TRUE(absl::StrContains(SqlOf(row.status()), "SELECT sum(length(x)) FROM filler"));
}

TEST(IntegrityTest, NoStatementTextInTheMessagesOfFailedStatements) {
  // A statement that does not compile, and one that fails as it runs: INTERNAL, no SQL either.
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(TempPath("statements.db"));
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<Stmt> bad = (*db)->Prepare("SELECT nothing FROM nowhere");
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(absl::StrContains(bad.status().message(), "SELECT")) << bad.status().message();
  EXPECT_EQ(SqlOf(bad.status()), "SELECT nothing FROM nowhere");
  absl::Status exec = (*db)->Exec("CREATE TABLE t (x NOT NULL); INSERT INTO t VALUES (NULL)");
  EXPECT_EQ(exec.code(), absl::StatusCode::kInternal) << exec;
  EXPECT_FALSE(absl::StrContains(exec.message(), "INSERT")) << exec.message();
  EXPECT_TRUE(absl::StrContains(exec.message(), "NOT NULL constraint failed")) << exec.message();
}

}  // namespace
}  // namespace nmsparse::server
