#include "server/test_support.h"

#include <openssl/sha.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "contract/worker_session.h"
#include "gtest/gtest.h"
#include "server/store/sqlite.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse::server::testing {
namespace {

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), sizeof(digest)));
}

// The text at `section`.`key` of a base spec's YAML ("" when absent).
std::string BaseValue(const v1::SweepSpec& spec, const char* section, const char* key) {
  try {
    const YAML::Node base = YAML::Load(spec.base());
    return base[section] && base[section][key] ? base[section][key].Scalar() : "";
  } catch (const YAML::Exception&) {
    return "";
  }
}

void Combine(const v1::SweepSpec& spec, size_t axis, NewRun current, std::string overrides,
             const std::string& m_sparsity, std::vector<NewRun>* out) {
  if (axis == static_cast<size_t>(spec.grid_size())) {
    current.index = static_cast<uint32_t>(out->size());
    current.content_hash = Sha256Hex(spec.base() + "|" + overrides);
    current.resolved_spec = absl::StrCat(
        "model: {name: ", BaseValue(spec, "model", "name"), "}\n", "resources: {gpus: ", current.gpus, "}\n",
        m_sparsity.empty() ? "" : "sparsity: {m_sparsity: " + m_sparsity + "}\n", "# ", overrides, "\n");
    out->push_back(std::move(current));
    return;
  }
  const v1::GridAxis& g = spec.grid(static_cast<int>(axis));
  for (const v1::AxisValue& v : g.values()) {
    NewRun next = current;
    next.labels.emplace_back(g.name(), v.label());
    std::map<std::string, std::string> sorted(v.set().begin(), v.set().end());
    std::string more = overrides;
    for (const auto& [k, val] : sorted) absl::StrAppend(&more, k, "=", val, ";");
    const std::string m = sorted.count("sparsity.m_sparsity") ? sorted["sparsity.m_sparsity"] : m_sparsity;
    Combine(spec, axis + 1, std::move(next), more, m, out);
  }
}

// The sessions of this process's FakeWorkers: by worker id, and by the runs assigned to each (the latest
// assignment wins), so that a test's report carries the session of the worker that holds its run.
struct SessionBook {
  absl::Mutex mu;
  std::map<int64_t, std::string> by_worker ABSL_GUARDED_BY(mu);
  std::map<int64_t, std::string> by_run ABSL_GUARDED_BY(mu);
};

SessionBook& Book() {
  static auto* book = new SessionBook;
  return *book;
}

void Attach(grpc::ClientContext* ctx, const std::string& session) {
  if (!session.empty()) ctx->AddMetadata(contract::kWorkerSessionMetadata, session);
}

}  // namespace

void AsWorker(grpc::ClientContext* ctx, int64_t worker_id) {
  std::string session;
  {
    absl::MutexLock lock(&Book().mu);
    session = Book().by_worker[worker_id];
  }
  Attach(ctx, session);
}

void AsHolderOf(grpc::ClientContext* ctx, int64_t run_id) {
  std::string session;
  {
    absl::MutexLock lock(&Book().mu);
    session = Book().by_run[run_id];
  }
  Attach(ctx, session);
}

std::string TempDbPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(dir ? dir : "/tmp", "/", name, "-", getpid(), ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

absl::StatusOr<std::vector<NewRun>> GridExpand(const v1::SweepSpec& spec) {
  if (BaseValue(spec, "model", "name").empty()) {
    return absl::InvalidArgumentError("model.name: \"\" is not a catalogued model");
  }
  NewRun base;
  uint32_t base_gpus = 1;
  absl::SimpleAtoi(BaseValue(spec, "resources", "gpus"), &base_gpus);
  base.gpus = spec.gpus_per_run() > 0 ? spec.gpus_per_run() : std::max(1u, base_gpus);
  std::vector<NewRun> out;
  Combine(spec, 0, base, "", "", &out);
  return out;
}

v1::SweepSpec MSweep(const std::string& name, const std::vector<std::string>& m_values, uint32_t gpus) {
  v1::SweepSpec s;
  s.set_name(name);
  s.set_base(absl::StrCat("model: {name: vit_micro_patch4_28}\nresources: {gpus: ", gpus, "}\n"));
  v1::GridAxis* axis = s.add_grid();
  axis->set_name("m");
  for (const std::string& m : m_values) {
    v1::AxisValue* v = axis->add_values();
    v->set_label(m);
    (*v->mutable_set())["sparsity.m_sparsity"] = m;
  }
  return s;
}

int64_t CountRows(const std::string& db_path, const std::string& table) {
  auto db = Database::Open(db_path);
  EXPECT_TRUE(db.ok()) << db.status();
  auto st = (*db)->Prepare("SELECT COUNT(*) FROM " + table);
  EXPECT_TRUE(st.ok()) << st.status();
  auto row = (*st)->Step();
  EXPECT_TRUE(row.ok() && *row);
  return (*st)->Int(0);
}

grpc::Status ReportEpoch(v1::WorkerGateway::Stub& gateway, const v1::RunAttempt& ra, int epoch,
                         const std::map<std::string, double>& values) {
  return ReportPoint(gateway, ra, "epoch", epoch, values);
}

grpc::Status ReportPoint(v1::WorkerGateway::Stub& gateway, const v1::RunAttempt& ra, const std::string& kind,
                         int epoch, const std::map<std::string, double>& values) {
  grpc::ClientContext ctx;
  v1::Ack ack;
  AsHolderOf(&ctx, ra.run_id());
  auto writer = gateway.ReportMetrics(&ctx, &ack);
  v1::MetricReport r;
  *r.mutable_run() = ra;
  r.mutable_point()->set_kind(kind);
  r.mutable_point()->set_epoch(epoch);
  for (const auto& [name, value] : values) (*r.mutable_point()->mutable_values())[name] = value;
  writer->Write(r);
  writer->WritesDone();
  return writer->Finish();
}

grpc::Status GatewayStart(v1::WorkerGateway::Stub& gateway, const v1::RunAttempt& ra) {
  v1::StartRunRequest req;
  *req.mutable_run() = ra;
  v1::Ack ack;
  grpc::ClientContext ctx;
  AsHolderOf(&ctx, ra.run_id());
  return gateway.StartRun(&ctx, req, &ack);
}

grpc::Status GatewayComplete(v1::WorkerGateway::Stub& gateway, const v1::RunAttempt& ra, v1::RunState outcome,
                             int exit_code, double top1) {
  v1::CompleteRunRequest req;
  *req.mutable_run() = ra;
  req.set_outcome(outcome);
  req.set_exit_code(exit_code);
  if (outcome == v1::SUCCEEDED) ReportPoint(gateway, ra, "final", 1, {{"top1", top1}});
  v1::Ack ack;
  grpc::ClientContext ctx;
  AsHolderOf(&ctx, ra.run_id());
  return gateway.CompleteRun(&ctx, req, &ack);
}

v1::RunAttempt Attempt(int64_t run, uint32_t attempt) {
  v1::RunAttempt ra;
  ra.set_run_id(run);
  ra.set_attempt(attempt);
  return ra;
}

std::vector<v1::Slot> GpuSlots(int n) {
  std::vector<v1::Slot> out(n);
  for (int i = 0; i < n; ++i) {
    out[i].set_index(i);
    out[i].set_kind(v1::Slot::GPU);
    out[i].set_name("test gpu");
    out[i].set_memory_mb(16000);
  }
  return out;
}

TestServer::TestServer(const std::string& db_path, int64_t lease_ms, int64_t grace_ms, SweepExpander expand) {
  options_.listen = "127.0.0.1:0";
  options_.db_path = db_path;
  options_.lease_ms = lease_ms;
  options_.grace_ms = grace_ms;
  options_.schedule_interval_ms = 100;
  options_.expand = std::move(expand);
  Restart();
}

TestServer::~TestServer() { Stop(); }

void TestServer::Stop() {
  coordinator_.reset();
  gateway_.reset();
  channel_.reset();
  if (server_) server_->Shutdown();
  server_.reset();
}

void TestServer::Restart() {
  Stop();
  auto s = NmServer::Start(options_);
  ASSERT_TRUE(s.ok()) << s.status();
  server_ = std::move(*s);
  Connect();
}

void TestServer::Connect() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  channel_ = grpc::CreateCustomChannel(server_->address(), grpc::InsecureChannelCredentials(), args);
  coordinator_ = v1::Coordinator::NewStub(channel_);
  gateway_ = v1::WorkerGateway::NewStub(channel_);
}

FakeWorker::FakeWorker(v1::WorkerGateway::Stub* gateway, int slots, int64_t id,
                       std::vector<v1::RunAttempt> running)
    : gateway_(gateway) {
  v1::RegisterRequest req;
  req.set_worker_id(id);
  req.set_host("test-host");
  for (const v1::Slot& s : GpuSlots(slots)) *req.add_slots() = s;
  for (const v1::RunAttempt& ra : running) *req.add_running() = ra;
  grpc::ClientContext ctx;
  AsWorker(&ctx, id);  // Coming back as `id`: with that worker's session, as its process would.
  grpc::Status s = gateway_->Register(&ctx, req, &registration_);
  EXPECT_TRUE(s.ok()) << s.error_message();
  id_ = registration_.worker_id();
  if (!registration_.session().empty()) {
    absl::MutexLock lock(&Book().mu);
    Book().by_worker[id_] = registration_.session();
  }
  ctx_ = std::make_unique<grpc::ClientContext>();
  AsWorker(ctx_.get(), id_);
  reader_ = std::thread([this] {
    v1::AssignmentsRequest areq;
    areq.set_worker_id(id_);
    auto stream = gateway_->Assignments(ctx_.get(), areq);
    v1::Assignment a;
    while (stream->Read(&a)) {
      {
        absl::MutexLock lock(&Book().mu);
        Book().by_run[a.run_id()] = Book().by_worker[id_];
      }
      absl::MutexLock lock(&mu_);
      received_.push_back(a);
    }
    (void)stream->Finish();
  });
}

FakeWorker::~FakeWorker() {
  StopHeartbeats();
  CloseStream();
}

void FakeWorker::StartHeartbeats(int interval_ms) {
  beating_ = true;
  heartbeats_ = std::thread([this, interval_ms] {
    while (beating_) {
      v1::HeartbeatRequest req;
      req.set_worker_id(id_);
      v1::HeartbeatResponse resp;
      grpc::ClientContext ctx;
      AsWorker(&ctx, id_);
      (void)gateway_->Heartbeat(&ctx, req, &resp);
      absl::SleepFor(absl::Milliseconds(interval_ms));
    }
  });
}

void FakeWorker::StopHeartbeats() {
  beating_ = false;
  if (heartbeats_.joinable()) heartbeats_.join();
}

void FakeWorker::CloseStream() {
  if (ctx_) ctx_->TryCancel();
  if (reader_.joinable()) reader_.join();
}

std::vector<v1::Assignment> FakeWorker::WaitAssignments(size_t n, int timeout_ms) {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return received_.size() >= n; };
  mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Milliseconds(timeout_ms));
  return received_;
}

}  // namespace nmsparse::server::testing
