// Helpers for the coordinator's tests: a temporary database path, a small stand-in sweep expander (grid axes
// only; the real one is the schemas library's), row counts, and an in-process server with client stubs.
#ifndef NMSPARSE_SERVER_TEST_SUPPORT_H_
#define NMSPARSE_SERVER_TEST_SUPPORT_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "nmsparse/v1/coordinator.grpc.pb.h"
#include "nmsparse/v1/worker_gateway.grpc.pb.h"
#include "server/nm_server.h"
#include "server/store/run_table.h"

namespace nmsparse::server::testing {

// A fresh path under TEST_TMPDIR (or /tmp), removing leftovers of an earlier run.
std::string TempDbPath(const std::string& name);

// Grid expansion: every combination of the axes' values, in axis order; labels are the value labels; the
// content hash is SHA-256 over the base spec and the chosen overrides. Rejects an empty model name with
// INVALID_ARGUMENT "model.name: ...", like the real validator would.
absl::StatusOr<std::vector<NewRun>> GridExpand(const v1::SweepSpec& spec);

// A sweep with one grid axis "m" over the given values (each sets sparsity.m_sparsity).
v1::SweepSpec MSweep(const std::string& name, const std::vector<std::string>& m_values, uint32_t gpus = 1);

// Rows of `table` in the database file.
int64_t CountRows(const std::string& db_path, const std::string& table);

// Sends one metric point of `ra` of `kind` with the given values over a ReportMetrics stream. These send
// the session of the FakeWorker the run was assigned to (AsHolderOf).
grpc::Status ReportPoint(v1::WorkerGateway::Stub& gateway, const v1::RunAttempt& ra, const std::string& kind,
                         int epoch, const std::map<std::string, double>& values);
grpc::Status ReportEpoch(v1::WorkerGateway::Stub& gateway, const v1::RunAttempt& ra, int epoch,
                         const std::map<std::string, double>& values);

// A worker's StartRun for `ra`, and its CompleteRun with `outcome` and `exit_code`; on SUCCEEDED it first
// reports the final point, {top1: `top1`}, as an agent does (a refused point does not stop the CompleteRun).
grpc::Status GatewayStart(v1::WorkerGateway::Stub& gateway, const v1::RunAttempt& ra);
grpc::Status GatewayComplete(v1::WorkerGateway::Stub& gateway, const v1::RunAttempt& ra, v1::RunState outcome,
                             int exit_code = 0, double top1 = 0.5);

// Attach the session of FakeWorker `worker_id` (as its process would send it), or of the FakeWorker that was
// last assigned run `run_id`, to a WorkerGateway call; nothing when this process has none.
void AsWorker(grpc::ClientContext* ctx, int64_t worker_id);
void AsHolderOf(grpc::ClientContext* ctx, int64_t run_id);

// Run `run`'s attempt `attempt`, as workers name it in their reports.
v1::RunAttempt Attempt(int64_t run, uint32_t attempt);

// A worker's slots: `n` GPU slots with indices 0..n-1.
std::vector<v1::Slot> GpuSlots(int n);

// nmserver in-process on 127.0.0.1:0 with the grid expander, and stubs over a real channel.
class TestServer {
 public:
  explicit TestServer(const std::string& db_path, int64_t lease_ms = 10000, int64_t grace_ms = 5000,
                      SweepExpander expand = GridExpand);
  ~TestServer();
  void Restart();
  void Stop();
  v1::Coordinator::Stub& coordinator() { return *coordinator_; }
  v1::WorkerGateway::Stub& gateway() { return *gateway_; }
  NmServer& server() { return *server_; }
  // What Restart starts the server with (limits, caps); change it, then Restart.
  ServerOptions& options() { return options_; }

 private:
  void Connect();
  ServerOptions options_;
  std::unique_ptr<NmServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Coordinator::Stub> coordinator_;
  std::unique_ptr<v1::WorkerGateway::Stub> gateway_;
};

// A simulated worker: registers, reads its Assignments stream on a thread and collects what arrives.
class FakeWorker {
 public:
  FakeWorker(v1::WorkerGateway::Stub* gateway, int slots, int64_t id = 0,
             std::vector<v1::RunAttempt> running = {});
  ~FakeWorker();
  int64_t id() const { return id_; }
  const v1::RegisterResponse& registration() const { return registration_; }
  // Waits up to `timeout_ms` for `n` assignments in total; returns those received so far.
  std::vector<v1::Assignment> WaitAssignments(size_t n, int timeout_ms = 5000);
  void CloseStream();
  // Heartbeats every `interval_ms` on a thread until StopHeartbeats (or destruction).
  void StartHeartbeats(int interval_ms);
  void StopHeartbeats();

 private:
  std::thread heartbeats_;
  std::atomic<bool> beating_{false};
  v1::WorkerGateway::Stub* gateway_;
  int64_t id_ = 0;
  v1::RegisterResponse registration_;
  std::unique_ptr<grpc::ClientContext> ctx_;
  std::thread reader_;
  absl::Mutex mu_;
  std::vector<v1::Assignment> received_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nmsparse::server::testing

#endif  // NMSPARSE_SERVER_TEST_SUPPORT_H_
