// Issue 36's rogue-worker probes through the real services and database: a holder of the shared worker token
// who is not the worker holding an attempt cannot report on it, complete it, take the worker's id over while
// its lease holds, or make it leave. Each case failed on the coordinator before worker sessions.
#include "contract/worker_session.h"

#include <grpcpp/grpcpp.h>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::Attempt;
using testing::FakeWorker;
using testing::MSweep;
using testing::TempDbPath;
using testing::TestServer;

class WorkerSessionTest : public ::testing::Test {
 protected:
  void Start(int64_t lease_ms = 10000, int64_t grace_ms = 5000) {
    server_ = std::make_unique<TestServer>(TempDbPath("worker_session"), lease_ms, grace_ms);
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = MSweep("s", {"4"});
    v1::SubmitSweepResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().SubmitSweep(&ctx, req, &resp).ok());
    run_ = resp.runs(0).id();
    holder_ = std::make_unique<FakeWorker>(&server_->gateway(), 1);
    ASSERT_EQ(holder_->WaitAssignments(1).size(), 1u);
    ASSERT_TRUE(testing::GatewayStart(server_->gateway(), Attempt(run_, 1)).ok());
  }

  // A second worker process with the same (shared) worker token: registered in its own right, no slot free.
  v1::RegisterResponse RegisterRogue(int64_t worker_id, const std::string& session = "") {
    v1::RegisterRequest req;
    req.set_worker_id(worker_id);
    req.set_host("evil");
    req.add_slots()->set_kind(v1::Slot::CPU);
    v1::RegisterResponse resp;
    grpc::ClientContext ctx;
    if (!session.empty()) ctx.AddMetadata(contract::kWorkerSessionMetadata, session);
    last_ = server_->gateway().Register(&ctx, req, &resp);
    return resp;
  }

  grpc::Status CompleteAs(const std::string& session) {
    v1::CompleteRunRequest req;
    *req.mutable_run() = Attempt(run_, 1);
    req.set_outcome(v1::SUCCEEDED);
    req.set_message("forged");
    v1::Ack ack;
    grpc::ClientContext ctx;
    if (!session.empty()) ctx.AddMetadata(contract::kWorkerSessionMetadata, session);
    return server_->gateway().CompleteRun(&ctx, req, &ack);
  }

  v1::Run Run() {
    v1::GetRunRequest req;
    req.set_run_id(run_);
    v1::GetRunResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(server_->coordinator().GetRun(&ctx, req, &resp).ok());
    return resp.run();
  }

  v1::Worker Worker(int64_t id) {
    v1::ListWorkersResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(server_->coordinator().ListWorkers(&ctx, v1::ListWorkersRequest(), &resp).ok());
    for (const v1::Worker& w : resp.workers()) {
      if (w.id() == id) return w;
    }
    ADD_FAILURE() << "no worker " << id;
    return {};
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<FakeWorker> holder_;
  int64_t run_ = 0;
  grpc::Status last_;
};

TEST_F(WorkerSessionTest, OnlyTheHoldingWorkerCompletesItsAttempt) {
  Start();
  const v1::RegisterResponse rogue = RegisterRogue(0);
  ASSERT_TRUE(last_.ok()) << last_.error_message();
  ASSERT_FALSE(rogue.session().empty());
  EXPECT_NE(rogue.session(), holder_->registration().session());

  grpc::Status s = CompleteAs(rogue.session());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(), "run " + std::to_string(run_) + " attempt 1 belongs to worker " +
                                   std::to_string(holder_->id()) + "; this call's session is worker " +
                                   std::to_string(rogue.worker_id()) +
                                   "'s: a worker acts only for the attempts its own registration holds");
  s = CompleteAs("");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Run().state(), v1::RUNNING);

  // The real worker's reports still go through.
  EXPECT_TRUE(testing::ReportEpoch(server_->gateway(), Attempt(run_, 1), 0, {{"top1", 0.5}}).ok());
  EXPECT_TRUE(CompleteAs(holder_->registration().session()).ok());
  EXPECT_EQ(Run().state(), v1::SUCCEEDED);
}

TEST_F(WorkerSessionTest, AWorkerIdIsNotTakenOverWhileItsLeaseHolds) {
  Start();
  RegisterRogue(holder_->id());
  EXPECT_EQ(last_.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(last_.error_message().find("worker " + std::to_string(holder_->id()) +
                                       " is registered by another nmworker process"),
            std::string::npos)
      << last_.error_message();
  RegisterRogue(holder_->id(), "nms_guessed");
  EXPECT_EQ(last_.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Worker(holder_->id()).host(), "test-host");
  EXPECT_EQ(Run().state(), v1::RUNNING);
  EXPECT_EQ(Run().attempt(), 1u);

  // Its own process comes back (a coordinator restart, a lost connection): kept, with the same session.
  FakeWorker again(&server_->gateway(), 1, holder_->id(), {Attempt(run_, 1)});
  EXPECT_EQ(again.id(), holder_->id());
  EXPECT_TRUE(again.registration().session().empty());  // It keeps the one it has.
  EXPECT_EQ(Run().state(), v1::RUNNING);
}

TEST_F(WorkerSessionTest, AnotherProcessCannotMakeAWorkerLeave) {
  Start();
  const v1::RegisterResponse rogue = RegisterRogue(0);
  v1::HeartbeatRequest leave;
  leave.set_worker_id(holder_->id());
  leave.set_leaving(true);
  v1::HeartbeatResponse resp;
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata(contract::kWorkerSessionMetadata, rogue.session());
    const grpc::Status s = server_->gateway().Heartbeat(&ctx, leave, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  }
  EXPECT_TRUE(Worker(holder_->id()).alive());
  EXPECT_EQ(Run().state(), v1::RUNNING);
  // Nor read its assignments.
  grpc::ClientContext ctx;
  ctx.AddMetadata(contract::kWorkerSessionMetadata, rogue.session());
  v1::AssignmentsRequest areq;
  areq.set_worker_id(holder_->id());
  auto stream = server_->gateway().Assignments(&ctx, areq);
  v1::Assignment a;
  EXPECT_FALSE(stream->Read(&a));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(WorkerSessionTest, AnExpiredWorkersIdMayBeRegisteredAgainWithANewSession) {
  Start(/*lease_ms=*/300, /*grace_ms=*/200);
  holder_->CloseStream();  // Silent from here: its lease expires (nothing heartbeats for it).
  for (int i = 0; i < 200 && Worker(holder_->id()).alive(); ++i) absl::SleepFor(absl::Milliseconds(25));
  ASSERT_FALSE(Worker(holder_->id()).alive());
  const v1::RegisterResponse taken = RegisterRogue(holder_->id());
  ASSERT_TRUE(last_.ok()) << last_.error_message();
  EXPECT_EQ(taken.worker_id(), holder_->id());
  EXPECT_FALSE(taken.session().empty());
  EXPECT_NE(taken.session(), holder_->registration().session());
  // The old session no longer speaks for the id.
  v1::HeartbeatRequest beat;
  beat.set_worker_id(holder_->id());
  v1::HeartbeatResponse resp;
  grpc::ClientContext ctx;
  ctx.AddMetadata(contract::kWorkerSessionMetadata, holder_->registration().session());
  EXPECT_EQ(server_->gateway().Heartbeat(&ctx, beat, &resp).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace nmsparse::server
