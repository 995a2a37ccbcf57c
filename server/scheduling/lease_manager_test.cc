// Leases when the coordinator's own storage fails: heartbeats cannot be stored then, so the silence is not
// the workers'; no lease runs out until a full lease has passed since the last failed write.
#include "server/scheduling/lease_manager.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "server/store/clock.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/sweep_table.h"
#include "server/store/worker_table.h"

namespace nmsparse::server {
namespace {

constexpr int64_t kLeaseMs = 3000;
constexpr int64_t kGraceMs = 1000;

class LeaseManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TEST_TMPDIR");
    const std::string path = absl::StrCat(dir ? dir : "/tmp", "/lease-", getpid(), ".db");
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    leases_ = std::make_unique<LeaseManager>(store_.get(), LeaseOptions{kLeaseMs, kGraceMs}, nullptr);
  }

  // A worker whose last heartbeat was at `heartbeat_ms`, running a run with no retries left.
  void AddRunningWorker(int64_t heartbeat_ms) {
    ASSERT_TRUE(store_
                    ->Write([&](Database* db) -> absl::Status {
                      google::protobuf::RepeatedPtrField<v1::Slot> slots;
                      slots.Add()->set_index(0);
                      NM_ASSIGN_OR_RETURN(worker_, UpsertWorker(db, 0, "w", slots, "", heartbeat_ms));
                      v1::SweepSpec spec;
                      spec.set_name("s");
                      NM_ASSIGN_OR_RETURN(int64_t sweep, InsertSweep(db, spec, 1, {}));
                      NewRun r;
                      r.content_hash = "h";
                      NM_ASSIGN_OR_RETURN(run_, InsertRun(db, sweep, r, 1, nullptr));
                      NM_RETURN_IF_ERROR(AssignRun(db, run_, worker_, {0}, heartbeat_ms).status());
                      v1::RunAttempt ra;
                      ra.set_run_id(run_);
                      ra.set_attempt(1);
                      return MarkRunning(db, ra, heartbeat_ms);
                    })
                    .ok());
  }

  // Writes fail (a read-only file stands in for a full disk: both are storage failures) for one heartbeat.
  void FailAHeartbeat() {
    ASSERT_TRUE(store_->Read([](Database* db) { return db->Exec("PRAGMA query_only = 1"); }).ok());
    absl::Status heartbeat = store_->Write([&](Database* db) { return TouchWorker(db, worker_, NowMs()); });
    EXPECT_EQ(heartbeat.code(), absl::StatusCode::kUnavailable) << heartbeat;
    ASSERT_TRUE(store_->Read([](Database* db) { return db->Exec("PRAGMA query_only = 0"); }).ok());
  }

  v1::RunState RunState() {
    v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
    EXPECT_TRUE(store_
                    ->Read([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(RunRecord r, LoadRun(db, run_, RunDetail::kSummary));
                      state = r.run.state();
                      return absl::OkStatus();
                    })
                    .ok());
    return state;
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<LeaseManager> leases_;
  int64_t worker_ = 0;
  int64_t run_ = 0;
};

TEST_F(LeaseManagerTest, NoLeaseRunsOutWithinALeaseOfAFailedWrite) {
  const int64_t start = NowMs();
  AddRunningWorker(start - 60000);  // Silent for a minute by its last stored heartbeat.
  FailAHeartbeat();
  const int64_t failed_at = store_->last_storage_failure_ms();
  ASSERT_GE(failed_at, start);

  // Storage is back: the worker gets a lease from the failure to get a heartbeat through.
  auto moved = leases_->Check(failed_at + kLeaseMs - 1);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, 0);
  moved = leases_->Check(failed_at + kLeaseMs + kGraceMs + 1);  // Marked not alive (grace from here).
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, 0);
  EXPECT_EQ(RunState(), v1::RUNNING);
  // Still silent a grace later: its run goes (no retries: FAILED).
  moved = leases_->Check(failed_at + kLeaseMs + 2 * kGraceMs + 2);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, 1);
  EXPECT_EQ(RunState(), v1::FAILED);
}

TEST_F(LeaseManagerTest, WithoutStorageFailuresASilentWorkersRunGoesAfterLeaseAndGrace) {
  const int64_t start = NowMs();
  AddRunningWorker(start);
  auto moved = leases_->Check(start + kLeaseMs + 1);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, 0);
  moved = leases_->Check(start + kLeaseMs + kGraceMs + 2);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, 1);
  EXPECT_EQ(RunState(), v1::FAILED);
}

}  // namespace
}  // namespace nmsparse::server
