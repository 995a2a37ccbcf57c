// The coordinator's input limits (docs/reliability.md, "Limits") over a real channel to an in-process
// nmserver with a real SQLite file: oversized sweeps and messages are refused and leave no trace; a run's
// log lines past its cap are dropped and counted.
#include <atomic>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "schemas/limits.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::CountRows;
using testing::FakeWorker;
using testing::GridExpand;
using testing::MSweep;
using testing::TempDbPath;
using testing::TestServer;

// MSweep's base with `axes` grid axes of `values` values each.
v1::SweepSpec Grid(int axes, int values) {
  v1::SweepSpec spec = MSweep("huge", {"4"});
  spec.clear_grid();
  for (int a = 0; a < axes; ++a) {
    v1::GridAxis* axis = spec.add_grid();
    axis->set_name("axis" + std::to_string(a));
    for (int v = 0; v < values; ++v) {
      v1::AxisValue* value = axis->add_values();
      value->set_label(std::to_string(v));
      (*value->mutable_set())["seed"] = std::to_string(v);
    }
  }
  return spec;
}

class BoundedInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = TempDbPath(::testing::UnitTest::GetInstance()->current_test_info()->name());
    // Counts expansions: a refused sweep must never reach the expander.
    server_ = std::make_unique<TestServer>(db_, 10000, 5000, [this](const v1::SweepSpec& spec) {
      ++expansions_;
      return GridExpand(spec);
    });
  }

  grpc::Status Submit(const v1::SweepSpec& spec, bool dry_run = false) {
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = spec;
    req.set_dry_run(dry_run);
    v1::SubmitSweepResponse resp;
    grpc::ClientContext ctx;
    return server_->coordinator().SubmitSweep(&ctx, req, &resp);
  }

  void ExpectNothingStored() {
    server_->Stop();
    for (const char* table : {"sweeps", "runs", "run_labels", "state_changes"}) {
      EXPECT_EQ(CountRows(db_, table), 0) << table;
    }
  }

  std::string db_;
  std::atomic<int> expansions_{0};
  std::unique_ptr<TestServer> server_;
};

TEST_F(BoundedInputsTest, TenMillionRunSweepIsRefusedUnexpandedAndLeavesNoTrace) {
  const v1::SweepSpec spec = Grid(7, 10);
  for (bool dry_run : {false, true}) {
    const absl::Time start = absl::Now();
    grpc::Status s = Submit(spec, dry_run);
    // The bound on a refusal (it takes milliseconds; the bound is generous for a loaded machine).
    EXPECT_LT(absl::Now() - start, absl::Seconds(1));
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(),
              "the sweep expands to 10,000,000 runs, more than the limit of 100,000 (nmserver "
              "--max_runs_per_sweep)");
  }
  EXPECT_EQ(expansions_, 0);
  ExpectNothingStored();
}

TEST_F(BoundedInputsTest, AThirtyAxisGridSaturatesInsteadOfOverflowing) {
  grpc::Status s = Submit(Grid(30, 10));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("at least 9,223,372,036,854,775,807 runs"), std::string::npos)
      << s.error_message();
  EXPECT_EQ(expansions_, 0);
  ExpectNothingStored();
}

TEST_F(BoundedInputsTest, TheLimitIsTheServersOption) {
  server_->options().max_runs_per_sweep = 2;
  server_->Restart();
  grpc::Status s = Submit(MSweep("three", {"4", "8", "16"}));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "the sweep expands to 3 runs, more than the limit of 2 (nmserver --max_runs_per_sweep)");
  EXPECT_TRUE(Submit(MSweep("two", {"4", "8"})).ok());
  server_->Stop();
  EXPECT_EQ(CountRows(db_, "runs"), 2);
}

TEST_F(BoundedInputsTest, AnOversizedRequestIsRefusedByTheServer) {
  // A client without nmctl's send limit: the server's receive limit is what refuses it.
  auto channel = grpc::CreateChannel(server_->server().address(), grpc::InsecureChannelCredentials());
  auto stub = v1::Coordinator::NewStub(channel);
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = MSweep("big", {"4"});
  req.mutable_spec()->set_idempotency_key(std::string(limits::kMaxRequestBytes, 'k'));
  v1::SubmitSweepResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = stub->SubmitSweep(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_EQ(expansions_, 0);
  ExpectNothingStored();
}

TEST_F(BoundedInputsTest, LogLinesPastTheRunsCapAreDroppedYetAnsweredOk) {
  server_->options().caps.max_log_lines = 2;
  server_->Restart();
  ASSERT_TRUE(Submit(MSweep("chatty", {"4"})).ok());
  FakeWorker worker(&server_->gateway(), 1);
  auto assigned = worker.WaitAssignments(1);
  ASSERT_EQ(assigned.size(), 1u);
  v1::LogReport log;
  log.mutable_run()->set_run_id(assigned[0].run_id());
  log.mutable_run()->set_attempt(assigned[0].attempt());
  for (const char* text : {"one", "two", "three"}) log.add_lines()->set_text(text);
  v1::Ack ack;
  {
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, log.run().run_id());
    grpc::Status s = server_->gateway().ReportLog(&ctx, log, &ack);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_EQ(ack.accepted(), 3u);  // "three" then evicted "two", the line after the head.
  v1::GetLogsRequest req;
  req.set_run_id(assigned[0].run_id());
  v1::GetLogsResponse logs;
  grpc::ClientContext ctx;
  ASSERT_TRUE(server_->coordinator().GetLogs(&ctx, req, &logs).ok());
  ASSERT_EQ(logs.lines_size(), 3);
  EXPECT_EQ(logs.lines(0).text(), "one");
  EXPECT_EQ(
      logs.lines(1).text(),
      "[nmserver] 1 log line(s) dropped here, between the run's first lines and its latest (the limit is 2 "
      "stored log lines, nmserver --max_log_lines_per_run; a worker whose outbox is full drops lines too)");
  EXPECT_EQ(logs.lines(2).text(), "three");
}

}  // namespace
}  // namespace nmsparse::server
