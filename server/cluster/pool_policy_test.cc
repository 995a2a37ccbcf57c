#include "server/cluster/pool_policy.h"

#include "gtest/gtest.h"

namespace nmsparse::server {
namespace {

PoolDemand Demand(uint32_t slots_per_job, uint32_t max_jobs, std::vector<uint32_t> queued) {
  PoolDemand d;
  d.slots_per_job = slots_per_job;
  d.max_jobs = max_jobs;
  d.queued_slots = std::move(queued);
  return d;
}

TEST(PoolPolicyTest, EmptyQueueAsksForNothing) {
  PoolPlan plan = PlanPool(Demand(1, 4, {}));
  EXPECT_EQ(plan.submit, 0u);
  EXPECT_EQ(plan.target_jobs, 0u);
}

TEST(PoolPolicyTest, OneJobPerRunUpToMaxJobs) {
  PoolPlan plan = PlanPool(Demand(1, 2, {1, 1, 1}));
  EXPECT_EQ(plan.submit, 2u);
  EXPECT_EQ(plan.target_jobs, 2u);
  EXPECT_EQ(plan.runs_past_max, 1u);
}

TEST(PoolPolicyTest, RunsShareAJobsSlots) {
  // Two 2-GPU runs and a 4-GPU run on 4-GPU jobs: first fit needs two jobs.
  PoolPlan plan = PlanPool(Demand(4, 8, {2, 4, 2}));
  EXPECT_EQ(plan.submit, 2u);
  EXPECT_EQ(plan.runs_past_max, 0u);
}

TEST(PoolPolicyTest, FreeWorkerSlotsAndStartingJobsServeFirst) {
  PoolDemand d = Demand(1, 4, {1, 1, 1});
  d.free_slots = {1};
  d.starting_jobs = {1};
  d.active_jobs = 2;
  PoolPlan plan = PlanPool(d);
  EXPECT_EQ(plan.submit, 1u);
  EXPECT_EQ(plan.target_jobs, 3u);
  EXPECT_EQ(plan.surplus_starting, 0u);
}

TEST(PoolPolicyTest, StartingJobsBeyondTheQueueAreSurplus) {
  PoolDemand d = Demand(1, 4, {1});
  d.starting_jobs = {1, 1, 1};
  d.active_jobs = 3;
  PoolPlan plan = PlanPool(d);
  EXPECT_EQ(plan.submit, 0u);
  EXPECT_EQ(plan.surplus_starting, 2u);
}

TEST(PoolPolicyTest, RunsLargerThanAJobAreNamedNotLaunched) {
  PoolPlan plan = PlanPool(Demand(2, 4, {4, 1}));
  EXPECT_EQ(plan.runs_too_large, 1u);
  EXPECT_EQ(plan.submit, 1u);
}

TEST(PoolPolicyTest, AtMaxJobsNothingIsSubmitted) {
  PoolDemand d = Demand(1, 2, {1, 1});
  d.active_jobs = 2;
  PoolPlan plan = PlanPool(d);
  EXPECT_EQ(plan.submit, 0u);
  EXPECT_EQ(plan.runs_past_max, 2u);
  EXPECT_EQ(plan.target_jobs, 2u);
}

TEST(PoolPolicyTest, AGangIsOneJobOfItsNodes) {
  PoolDemand d = Demand(1, 4, {1, 1});
  d.queued_nodes = {2, 1};
  PoolPlan plan = PlanPool(d);
  EXPECT_EQ(plan.submit, 2u);
  EXPECT_EQ(plan.submit_nodes, (std::vector<uint32_t>{2, 1}));
  EXPECT_EQ(plan.target_jobs, 3u);  // Workers: the gang job counts its 2 nodes.
}

TEST(PoolPolicyTest, AGangUsesFreeWorkersOnlyWhenEnoughHaveRoom) {
  PoolDemand d = Demand(1, 4, {1});
  d.queued_nodes = {2};
  d.free_slots = {1, 1};
  d.active_jobs = 2;
  EXPECT_EQ(PlanPool(d).submit, 0u);
  d.free_slots = {1};
  d.active_jobs = 1;
  PoolPlan plan = PlanPool(d);
  EXPECT_EQ(plan.submit_nodes, std::vector<uint32_t>{2});
}

TEST(PoolPolicyTest, AStartingGangJobIsNotSubmittedTwice) {
  PoolDemand d = Demand(1, 4, {1, 1});
  d.queued_nodes = {2, 1};
  d.free_slots = {1};        // The gang job's first worker registered...
  d.starting_jobs = {1, 1};  // ...its second has not; a 1-node job starts too.
  d.active_jobs = 3;
  PoolPlan plan = PlanPool(d);
  EXPECT_EQ(plan.submit, 0u);
  EXPECT_EQ(plan.surplus_starting, 0u);
}

TEST(PoolPolicyTest, OnlyTheStartingJobsNoRunNeedsAreSurplus) {
  PoolDemand d = Demand(1, 8, {1});
  d.queued_nodes = {2};
  d.starting_jobs = {1, 2, 1};
  d.active_jobs = 4;
  PoolPlan plan = PlanPool(d);
  EXPECT_EQ(plan.surplus_jobs, std::vector<size_t>{2});  // The gang fits the first two nodes: jobs 0 and 1.
}

TEST(PoolPolicyTest, AGangWiderThanMaxJobsIsNamedAndHoldsBackTheRunsBehindIt) {
  PoolPlan wide = PlanPool([] {
    PoolDemand d = Demand(1, 2, {1});
    d.queued_nodes = {3};
    return d;
  }());
  EXPECT_EQ(wide.runs_too_wide, 1u);
  EXPECT_EQ(wide.submit, 0u);
  PoolDemand d = Demand(1, 3, {1, 1});
  d.queued_nodes = {3, 1};
  d.active_jobs = 1;
  PoolPlan plan = PlanPool(d);
  EXPECT_EQ(plan.submit, 0u);  // The 1-node run behind the gang does not take the room it waits for.
  EXPECT_EQ(plan.runs_past_max, 2u);
}

}  // namespace
}  // namespace nmsparse::server
