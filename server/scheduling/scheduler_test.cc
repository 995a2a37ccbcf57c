// Scheduling passes against a real store: only live workers with an open stream get runs, gangs stay on one
// node, the fullest node that fits wins, priority beats submission order.
#include "server/scheduling/scheduler.h"

#include <map>

#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "server/store/clock.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/sweep_table.h"
#include "server/store/worker_table.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s =
        Store::Open(testing::TempDbPath(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    scheduler_ = std::make_unique<Scheduler>(store_.get(), &hub_, absl::Seconds(1));
  }

  int64_t AddWorker(int slots, bool connect = true, const std::string& storage = "",
                    const std::string& addr = "") {
    int64_t id = 0;
    google::protobuf::RepeatedPtrField<v1::Slot> s;
    for (const v1::Slot& slot : testing::GpuSlots(slots)) *s.Add() = slot;
    EXPECT_TRUE(store_
                    ->Write([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(id, UpsertWorker(db, 0, "h", s, "", NowMs(), addr, storage));
                      return absl::OkStatus();
                    })
                    .ok());
    if (connect) tokens_[id] = hub_.Connect(id);
    return id;
  }

  int64_t AddRun(uint32_t gpus, int32_t priority, uint32_t nodes = 1) {
    int64_t id = 0;
    EXPECT_TRUE(store_
                    ->Write([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(int64_t sweep, InsertSweep(db, v1::SweepSpec(), 1, {}));
                      NewRun r;
                      r.content_hash = "h";
                      r.gpus = gpus;
                      r.nodes = nodes;
                      r.max_retries = nodes > 1 ? 1 : 0;  // A lost gang attempt goes back to the queue.
                      r.priority = priority;
                      NM_ASSIGN_OR_RETURN(id, InsertRun(db, sweep, r, 1, nullptr));
                      return absl::OkStatus();
                    })
                    .ok());
    return id;
  }

  v1::Run Load(int64_t id) {
    v1::Run run;
    EXPECT_TRUE(store_
                    ->Read([&](Database* db) -> absl::Status {
                      NM_ASSIGN_OR_RETURN(RunRecord r, LoadRun(db, id, RunDetail::kSummary));
                      run = r.run;
                      return absl::OkStatus();
                    })
                    .ok());
    return run;
  }

  void Succeed(int64_t run) {
    v1::CompleteRunRequest req;
    req.mutable_run()->set_run_id(run);
    req.mutable_run()->set_attempt(Load(run).attempt());
    req.set_outcome(v1::SUCCEEDED);
    ASSERT_TRUE(store_->Write([&](Database* db) { return CompleteAttempt(db, req, NowMs()); }).ok());
  }

  int Pass() {
    auto placed = scheduler_->RunPass();
    EXPECT_TRUE(placed.ok()) << placed.status();
    return placed.ok() ? *placed : -1;
  }

  // Pushed assignments of a connected worker.
  std::vector<v1::Assignment> Pushed(int64_t worker) {
    std::vector<v1::Assignment> out;
    hub_.Next(worker, tokens_[worker], absl::ZeroDuration(), &out);
    return out;
  }

  std::unique_ptr<Store> store_;
  AssignmentHub hub_;
  std::map<int64_t, uint64_t> tokens_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, BestFitGangPlacementInPriorityOrder) {
  int64_t small = AddWorker(2);
  int64_t large = AddWorker(4);
  AddWorker(8, /*connect=*/false);  // Registered but no stream: never chosen.
  int64_t one = AddRun(1, 0);
  int64_t gang = AddRun(4, 0);
  int64_t urgent = AddRun(2, 9);
  int64_t too_big = AddRun(8, 0);
  EXPECT_EQ(Pass(), 2);
  // urgent (priority 9) first: the fullest node that fits 2 is the 2-slot one; then `one` goes to the 4-slot
  // node (the 2-slot node is full); the 4-gang no longer fits anywhere and is not split; the 8-gang waits for
  // a connected node that large.
  v1::Run u = Load(urgent), o = Load(one);
  EXPECT_EQ(u.worker_id(), small);
  EXPECT_EQ(u.slots_size(), 2);
  EXPECT_EQ(u.attempt(), 1u);
  EXPECT_EQ(o.worker_id(), large);
  EXPECT_EQ(Load(gang).state(), v1::QUEUED);
  EXPECT_EQ(Load(too_big).state(), v1::QUEUED);
  ASSERT_EQ(Pushed(small).size(), 1u);
  auto to_large = Pushed(large);
  ASSERT_EQ(to_large.size(), 1u);
  EXPECT_EQ(to_large[0].run_id(), one);
  EXPECT_EQ(Pass(), 0);  // Nothing changed: nothing more fits.
}

TEST_F(SchedulerTest, GangWaitsForWholeNodeThenTakesIt) {
  int64_t node = AddWorker(4);
  int64_t first = AddRun(3, 0);
  int64_t gang = AddRun(4, 0);
  int64_t filler = AddRun(1, 0);
  EXPECT_EQ(Pass(), 2);  // 3 + 1: the gang of 4 cannot start while 3 slots are held.
  EXPECT_EQ(Load(first).worker_id(), node);
  EXPECT_EQ(Load(filler).worker_id(), node);
  EXPECT_EQ(Load(gang).state(), v1::QUEUED);
  for (int64_t done : {first, filler}) {
    v1::CompleteRunRequest req;
    req.mutable_run()->set_run_id(done);
    req.mutable_run()->set_attempt(1);
    req.set_outcome(v1::SUCCEEDED);
    ASSERT_TRUE(store_->Write([&](Database* db) { return CompleteAttempt(db, req, NowMs()); }).ok());
  }
  EXPECT_EQ(Pass(), 1);
  v1::Run g = Load(gang);
  EXPECT_EQ(g.state(), v1::ASSIGNED);
  EXPECT_EQ(g.slots_size(), 4);
}

// A 2-node run is assigned on two workers of one shared storage at once, one attempt, each node told its
// rank, node 0's address and a port of the configured range; workers of another storage or none never join
// it.
TEST_F(SchedulerTest, MultiNodeRunTakesWholeGangAtOnce) {
  scheduler_->SetRendezvousPorts(31000, 31001);
  int64_t alone = AddWorker(1);  // No shared storage.
  int64_t a = AddWorker(1, true, "nfs", "10.0.0.1");
  int64_t other = AddWorker(1, true, "other", "10.0.0.9");
  int64_t b = AddWorker(1, true, "nfs", "10.0.0.2");
  int64_t run = AddRun(1, 0, 2);
  EXPECT_EQ(Pass(), 1);
  v1::Run r = Load(run);
  EXPECT_EQ(r.state(), v1::ASSIGNED);
  EXPECT_EQ(r.worker_id(), a);
  ASSERT_EQ(r.gang().members_size(), 2);
  EXPECT_EQ(r.gang().members(1).worker_id(), b);
  EXPECT_EQ(r.gang().master_addr(), "10.0.0.1");
  EXPECT_EQ(r.gang().master_port(), 31000u);
  auto to_a = Pushed(a), to_b = Pushed(b);
  ASSERT_EQ(to_a.size(), 1u);
  ASSERT_EQ(to_b.size(), 1u);
  EXPECT_EQ(to_a[0].node_rank(), 0u);
  EXPECT_EQ(to_b[0].node_rank(), 1u);
  EXPECT_EQ(to_b[0].nodes(), 2u);
  EXPECT_EQ(to_b[0].master_addr(), "10.0.0.1");
  EXPECT_EQ(to_b[0].master_port(), 31000u);
  EXPECT_EQ(to_b[0].attempt(), to_a[0].attempt());
  EXPECT_TRUE(Pushed(alone).empty());
  EXPECT_TRUE(Pushed(other).empty());
  // Both nodes' slots are held: a 1-node run goes elsewhere.
  int64_t single = AddRun(1, 0);
  EXPECT_EQ(Pass(), 1);
  EXPECT_NE(Load(single).worker_id(), a);
  EXPECT_NE(Load(single).worker_id(), b);
}

// Reservation: a waiting 2-node run keeps a stream of 1-node runs (submitted after it) off the workers it
// reserved, so it starts as soon as their runs end instead of never.
TEST_F(SchedulerTest, StreamOfSmallRunsDoesNotStarveAGang) {
  int64_t a = AddWorker(1, true, "nfs", "10.0.0.1");
  int64_t b = AddWorker(1, true, "nfs", "10.0.0.2");
  int64_t busy = AddRun(1, 0);
  EXPECT_EQ(Pass(), 1);  // `busy` holds one of the two workers.
  int64_t gang = AddRun(1, 0, 2);
  std::map<int64_t, std::string> why;
  ASSERT_TRUE(store_
                  ->Read([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(why, scheduler_->GangWaitReasons(db));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(why[gang], "needs 2 nodes with 1 free GPU slot each on one shared storage; 1 has them");
  for (int i = 0; i < 3; ++i) {
    int64_t small = AddRun(1, 0);
    EXPECT_EQ(Pass(), 0) << "small run " << i << " took a reserved worker";
    EXPECT_EQ(Load(small).state(), v1::QUEUED);
  }
  Succeed(busy);
  EXPECT_EQ(Pass(), 1);  // The gang, not the small runs queued after it.
  EXPECT_EQ(Load(gang).state(), v1::ASSIGNED);
  EXPECT_EQ(Load(gang).gang().members_size(), 2);
  (void)a;
  (void)b;
}

// Losing any worker of a gang loses the attempt as one: it goes back to the queue, the other node is no
// longer its holder (told to stop), and its slots are free again.
TEST_F(SchedulerTest, LosingOneNodeOfAGangLosesTheWholeAttempt) {
  int64_t a = AddWorker(1, true, "nfs", "10.0.0.1");
  int64_t b = AddWorker(1, true, "nfs", "10.0.0.2");
  int64_t run = AddRun(1, 0, 2);
  EXPECT_EQ(Pass(), 1);
  RunRecord before;
  ASSERT_TRUE(store_
                  ->Write([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(auto held_by_b, ActiveRunsHeldBy(db, b, v1::RUN_STATE_UNSPECIFIED,
                                                                         RunDetail::kSummary));
                    EXPECT_EQ(held_by_b.size(), 1u);
                    before = held_by_b.at(0);
                    NM_RETURN_IF_ERROR(MarkWorkerGone(db, b, 1));
                    NM_ASSIGN_OR_RETURN(auto dead, DeadWorkersHoldingRuns(db, 2));
                    EXPECT_EQ(dead, std::vector<int64_t>{b});
                    return LoseAttempt(db, before, "worker lost", NowMs());
                  })
                  .ok());
  v1::Run r = Load(run);
  EXPECT_EQ(r.state(), v1::QUEUED);
  EXPECT_FALSE(HoldsAttempt(r, a) && IsActive(r.state()));
  ASSERT_TRUE(store_
                  ->Read([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(auto held, HeldSlots(db));
                    EXPECT_TRUE(held.empty());
                    return absl::OkStatus();
                  })
                  .ok());
}

// Node 0's hand-backs for a taken port are counted per run: as many in a row as the range has ports end the
// round (the range named), and the count starts over; a started attempt starts it over too.
TEST_F(SchedulerTest, TakenPortHandBacksAreBoundedByTheRange) {
  scheduler_->SetRendezvousPorts(29600, 29602);
  EXPECT_FALSE(scheduler_->CountTakenPort(7).has_value());
  EXPECT_FALSE(scheduler_->CountTakenPort(7).has_value());
  EXPECT_FALSE(scheduler_->CountTakenPort(8).has_value());  // Another run's count is its own.
  EXPECT_EQ(scheduler_->CountTakenPort(7).value_or(""), "29600-29602");
  EXPECT_FALSE(scheduler_->CountTakenPort(7).has_value());  // Started over.
  scheduler_->ClearTakenPorts(8);
  EXPECT_FALSE(scheduler_->CountTakenPort(8).has_value());
  EXPECT_FALSE(scheduler_->CountTakenPort(8).has_value());
  EXPECT_EQ(scheduler_->CountTakenPort(8).value_or(""), "29600-29602");
}

}  // namespace
}  // namespace nmsparse::server
