// Every request is bounded where it enters nmserver (docs/reliability.md, "Limits"): over a real channel to
// an in-process nmserver with a real SQLite file, each over-limit request is refused with INVALID_ARGUMENT
// naming the field and the limit and leaves no trace, and a worker's long log line or end message is cut,
// not refused. Issue 22 stored a 50 MB sweep name, a 30 MB axis label, a 40 MB idempotency key and a 40 MB
// base.name sent with grpcio; here each is one byte past its limit.
#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/dynamic_message.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "schemas/limits.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::CountRows;
using testing::FakeWorker;
using testing::MSweep;
using testing::TempDbPath;
using testing::TestServer;

class RequestBoundsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = TempDbPath(::testing::UnitTest::GetInstance()->current_test_info()->name());
    server_ = std::make_unique<TestServer>(db_);
  }

  grpc::Status Submit(const v1::SweepSpec& spec) {
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = spec;
    v1::SubmitSweepResponse resp;
    grpc::ClientContext ctx;
    return server_->coordinator().SubmitSweep(&ctx, req, &resp);
  }

  // Refused with INVALID_ARGUMENT and exactly `message`.
  void ExpectRefused(const v1::SweepSpec& spec, const std::string& message) {
    const grpc::Status s = Submit(spec);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_EQ(s.error_message(), message);
  }

  // No sweep as the API lists them, and no row in the file.
  void ExpectNothingStored() {
    v1::ListSweepsResponse sweeps;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_->coordinator().ListSweeps(&ctx, v1::ListSweepsRequest(), &sweeps).ok());
    EXPECT_EQ(sweeps.sweeps_size(), 0);
    server_->Stop();
    for (const char* table : {"sweeps", "runs", "run_labels", "state_changes"}) {
      EXPECT_EQ(CountRows(db_, table), 0) << table;
    }
  }

  std::string db_;
  std::unique_ptr<TestServer> server_;
};

TEST_F(RequestBoundsServiceTest, TheIssuesFourOversizedFieldsAreRefusedAndNothingIsStored) {
  const std::string name(limits::kMaxNameBytes + 1, 'n');
  v1::SweepSpec spec = MSweep(name, {"4"});
  ExpectRefused(spec, "spec.name: 257 bytes, more than the limit of 256 bytes");

  spec = MSweep("label", {"4", "8"});
  spec.mutable_grid(0)->mutable_values(1)->set_label(name);
  ExpectRefused(spec, "spec.grid[0].values[1].label: 257 bytes, more than the limit of 256 bytes");

  spec = MSweep("key", {"4"});
  spec.set_idempotency_key(std::string(limits::kMaxIdempotencyKeyBytes + 1, 'k'));
  ExpectRefused(spec, "spec.idempotency_key: 129 bytes, more than the limit of 128 bytes");

  spec = MSweep("base", {"4"});
  spec.set_base(absl::StrCat(spec.base(), "name: ", std::string(limits::kMaxSpecFileBytes, 'b'), "\n"));
  ExpectRefused(spec, "spec.base: 1,048,639 bytes, more than the limit of 1,048,576 bytes");
  ExpectNothingStored();
}

TEST_F(RequestBoundsServiceTest, EveryKindOfSpecFieldIsBounded) {
  v1::SweepSpec spec = MSweep("value", {"4"});
  (*spec.mutable_grid(0)->mutable_values(0)->mutable_set())["sparsity.m_sparsity"] =
      std::string(limits::kMaxValueTextBytes + 1, '4');
  ExpectRefused(
      spec,
      "spec.grid[0].values[0].set[\"sparsity.m_sparsity\"].value: 8,193 bytes, more than the limit of "
      "8,192 bytes");

  spec = MSweep("values", {});
  for (int i = 0; i <= limits::kMaxAxisValues; ++i) {
    v1::AxisValue* value = spec.mutable_grid(0)->add_values();
    value->set_label(std::to_string(i));
  }
  ExpectRefused(spec, "spec.grid[0].values: 100,001 entries, more than the limit of 100,000 entries");

  // Each value within its bound, the spec past its own.
  spec = MSweep("whole", {});
  for (int i = 0; spec.ByteSizeLong() <= static_cast<size_t>(limits::kMaxSweepSpecBytes); ++i) {
    v1::AxisValue* value = spec.mutable_grid(0)->add_values();
    value->set_label(std::to_string(i));
    (*value->mutable_set())["data.path"] = std::string(limits::kMaxPathBytes, 'p');
  }
  const grpc::Status whole = Submit(spec);
  EXPECT_EQ(whole.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(whole.error_message().rfind("spec: ", 0), 0u) << whole.error_message();
  EXPECT_NE(whole.error_message().find("more than the limit of 8,388,608 bytes"), std::string::npos);
  ExpectNothingStored();
}

TEST_F(RequestBoundsServiceTest, TheServerChecksRandomAxesAndSearchSettingsAsNmctlDoes) {
  v1::SweepSpec spec = MSweep("backwards", {"4"});
  v1::RandomAxis* lr = spec.add_random();
  lr->set_key("optimizer.lr");
  lr->set_min(2);
  lr->set_max(1);
  ExpectRefused(spec, "random.optimizer.lr.max: value 1 is out of range: must be >= 2");

  spec = MSweep("tpe", {"4"});
  spec.clear_grid();
  lr = spec.add_random();
  lr->set_key("optimizer.lr");
  lr->set_min(1e-4);
  lr->set_max(1e-2);
  v1::Search* search = spec.mutable_search();
  search->set_algorithm("tpe");
  search->set_metric("top1");
  search->set_mode("max");
  search->set_budget(4);
  search->set_n_startup(1);
  search->set_n_candidates(4'000'000'000u);
  ExpectRefused(spec, "search.n_candidates: value 4000000000 is out of range: must be <= 1000");
  ExpectNothingStored();
}

TEST_F(RequestBoundsServiceTest, OtherRequestsAreBoundedToo) {
  v1::ForkRunRequest fork;
  fork.set_run_id(1);
  fork.add_set("seed=" + std::string(limits::kMaxValueTextBytes, '1'));
  v1::ForkRunResponse forked;
  grpc::ClientContext fork_ctx;
  grpc::Status s = server_->coordinator().ForkRun(&fork_ctx, fork, &forked);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "set[0]: 8,197 bytes, more than the limit of 8,192 bytes");

  v1::RegisterRequest worker;
  worker.set_host(std::string(300, 'h'));
  worker.add_slots()->set_kind(v1::Slot::CPU);
  v1::RegisterResponse registered;
  grpc::ClientContext register_ctx;
  s = server_->gateway().Register(&register_ctx, worker, &registered);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "host: 300 bytes, more than the limit of 256 bytes");
  server_->Stop();
  EXPECT_EQ(CountRows(db_, "workers"), 0);
}

// The worker contract (docs/reliability.md): a long log line or end message is cut, and the report goes in;
// any other field of a report past its bound is refused, naming it.
TEST_F(RequestBoundsServiceTest, AWorkersLongTextIsCutAndItsOutcomeKept) {
  ASSERT_TRUE(Submit(MSweep("long", {"4"})).ok());
  FakeWorker worker(&server_->gateway(), 1);
  auto assigned = worker.WaitAssignments(1);
  ASSERT_EQ(assigned.size(), 1u);
  v1::RunAttempt ra;
  ra.set_run_id(assigned[0].run_id());
  ra.set_attempt(assigned[0].attempt());

  v1::MetricReport metric;
  *metric.mutable_run() = ra;
  metric.mutable_point()->set_kind("epoch");
  (*metric.mutable_point()->mutable_labels())["phase"] = std::string(300, 'p');
  v1::Ack ack;
  {
    grpc::ClientContext ctx;
    auto stream = server_->gateway().ReportMetrics(&ctx, &ack);
    stream->Write(metric);
    stream->WritesDone();
    const grpc::Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(),
              "point.labels[\"phase\"].value: 300 bytes, more than the limit of 256 bytes");
  }

  v1::LogReport log;
  *log.mutable_run() = ra;
  const std::string line(3 * limits::kMaxLogLineBytes, 'l');
  log.add_lines()->set_text(line);
  {
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, log.run().run_id());
    ASSERT_TRUE(server_->gateway().ReportLog(&ctx, log, &ack).ok());
  }
  v1::CompleteRunRequest done;
  *done.mutable_run() = ra;
  done.set_outcome(v1::FAILED);
  done.set_exit_code(1);
  done.set_message(std::string(20'000, 'm'));
  {
    grpc::ClientContext ctx;
    testing::AsHolderOf(&ctx, done.run().run_id());
    const grpc::Status s = server_->gateway().CompleteRun(&ctx, done, &ack);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  v1::GetLogsRequest logs_req;
  logs_req.set_run_id(ra.run_id());
  v1::GetLogsResponse logs;
  grpc::ClientContext logs_ctx;
  ASSERT_TRUE(server_->coordinator().GetLogs(&logs_ctx, logs_req, &logs).ok());
  ASSERT_EQ(logs.lines_size(), 1);
  EXPECT_EQ(logs.lines(0).text(), limits::CutLogLine(line));
  EXPECT_LE(static_cast<int64_t>(logs.lines(0).text().size()), limits::kMaxLogLineBytes);

  v1::GetRunRequest run_req;
  run_req.set_run_id(ra.run_id());
  v1::GetRunResponse run;
  grpc::ClientContext run_ctx;
  ASSERT_TRUE(server_->coordinator().GetRun(&run_ctx, run_req, &run).ok());
  EXPECT_EQ(run.run().state(), v1::FAILED);  // MSweep's max_retries is 0.
  EXPECT_LT(run.run().message().size(), 8'300u) << run.run().message().size();
  EXPECT_NE(run.run().message().find(" bytes cut]"), std::string::npos);
}

// Waits for `tag` on `cq`; returns whether its operation succeeded.
bool Await(grpc::CompletionQueue* cq, intptr_t tag) {
  void* got = nullptr;
  bool ok = false;
  EXPECT_TRUE(cq->Next(&got, &ok));
  EXPECT_EQ(reinterpret_cast<intptr_t>(got), tag);
  return ok;
}

// Sends `bytes` as the one request message of `method` (any streaming kind) and returns the call's status.
grpc::Status CallRaw(grpc::GenericStub* stub, const std::string& method, const std::string& bytes) {
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto call = stub->PrepareCall(&ctx, method, &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  grpc::Status status;
  if (Await(&cq, 1)) {
    grpc::Slice slice(bytes);
    call->Write(grpc::ByteBuffer(&slice, 1), reinterpret_cast<void*>(2));
    Await(&cq, 2);
    call->WritesDone(reinterpret_cast<void*>(3));
    Await(&cq, 3);
  }
  call->Finish(&status, reinterpret_cast<void*>(4));
  Await(&cq, 4);
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

// Each method of both services, the ones added later included, checks its request before anything else: a
// request of its type carrying oversized unknown fields (a field this build does not know) is refused.
TEST_F(RequestBoundsServiceTest, EveryMethodOfBothServicesChecksItsRequest) {
  grpc::GenericStub stub(
      grpc::CreateChannel(server_->server().address(), grpc::InsecureChannelCredentials()));
  int methods = 0;
  for (const char* name : {"nmsparse.v1.Coordinator", "nmsparse.v1.WorkerGateway"}) {
    const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int m = 0; m < service->method_count(); ++m) {
      const auto* method = service->method(m);
      std::unique_ptr<google::protobuf::Message> request(
          google::protobuf::MessageFactory::generated_factory()->GetPrototype(method->input_type())->New());
      request->GetReflection()
          ->MutableUnknownFields(request.get())
          ->AddLengthDelimited(999, std::string(5000, 'u'));
      const std::string path = "/" + std::string(name) + "/" + method->name();
      const grpc::Status s = CallRaw(&stub, path, request->SerializeAsString());
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << path << ": " << s.error_message();
      EXPECT_EQ(s.error_message(), "(unknown fields): 5,000 bytes, more than the limit of 4,096 bytes")
          << path;
      ++methods;
    }
  }
  EXPECT_EQ(methods, 25);
  ExpectNothingStored();
}

}  // namespace
}  // namespace nmsparse::server
