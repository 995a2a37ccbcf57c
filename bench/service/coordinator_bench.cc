// Coordinator benchmarks over loopback gRPC against an in-process nmserver (real SQLite file, real channel).
// The driver speaks WorkerGateway itself, so the figures are the coordinator's own overhead:
//   makespan   N runs of run_ms each on S slots: makespan / ideal (N * run_ms / S); target overhead <= 2%
//   submit     a sweep of N runs: time until acknowledged and stored; target <= 2 s
//   heartbeat  W workers heartbeating at 1 Hz for D s: p50 / p99 Heartbeat latency; target p99 <= 20 ms
//   restart    N runs in the database: time from start until the first RPC is answered; target <= 2 s
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/service/bench_sweep.h"
#include "common/status_macros.h"
#include "contract/worker_session.h"
#include "grpcpp/grpcpp.h"
#include "nmsparse/v1/coordinator.grpc.pb.h"
#include "nmsparse/v1/worker_gateway.grpc.pb.h"
#include "server/nm_server.h"
#include "server/store/event_table.h"
#include "server/store/run_table.h"
#include "server/store/store.h"
#include "server/store/sweep_table.h"
#include "server/store/worker_table.h"
#include "server/sweeps/parallel_expander.h"
#include "server/sweeps/schemas_expander.h"

ABSL_FLAG(std::string, scenario, "all", "makespan, submit, heartbeat, restart or all");
ABSL_FLAG(std::string, dir, "/tmp", "directory for the benchmark databases");
ABSL_FLAG(int, runs, 2000, "makespan: runs");
ABSL_FLAG(int, run_ms, 500, "makespan: duration of each run");
ABSL_FLAG(int, slots, 16, "makespan: slots of the one simulated worker");
ABSL_FLAG(int, submit_runs, 10000, "submit: runs in the sweep");
ABSL_FLAG(int, workers, 500, "heartbeat: simulated workers");
ABSL_FLAG(int, heartbeat_s, 20, "heartbeat: seconds of heartbeating");
ABSL_FLAG(int, client_threads, 8, "heartbeat: client threads sharing the workers");
ABSL_FLAG(int, restart_runs, 100000, "restart: runs in the database");

namespace nmsparse::bench {
namespace {

using server::NmServer;
using server::ServerOptions;

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

std::string FreshDb(const std::string& name) {
  std::string path = absl::StrCat(absl::GetFlag(FLAGS_dir), "/nmsparse-bench-", name, "-", getpid(), ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

void Cleanup(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

// nmserver's expander: the schemas library's, spread over the machine's cores.
server::SweepExpander ServerExpander() {
  return server::ParallelExpander(server::ExpandWithSchemas,
                                  static_cast<int>(std::thread::hardware_concurrency()));
}

std::unique_ptr<NmServer> StartServer(const std::string& db,
                                      server::SweepExpander expand = ServerExpander()) {
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.db_path = db;
  o.expand = std::move(expand);
  auto s = NmServer::Start(o);
  if (!s.ok()) {
    std::fprintf(stderr, "cannot start nmserver: %s\n", s.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*s);
}

std::shared_ptr<grpc::Channel> Channel(const std::string& address, int tag = 0) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetInt("nmsparse.bench.channel", tag);  // Distinct args: a connection of its own.
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

// A WorkerGateway call made as the worker that registered with `session`.
void AsWorker(grpc::ClientContext* ctx, const std::string& session) {
  ctx->AddMetadata(contract::kWorkerSessionMetadata, session);
}

v1::RegisterRequest WorkerRequest(int slots) {
  v1::RegisterRequest req;
  req.set_host("bench");
  for (int i = 0; i < slots; ++i) {
    v1::Slot* s = req.add_slots();
    s->set_index(i);
    s->set_kind(v1::Slot::CPU);
    s->set_name("cpu");
  }
  return req;
}

absl::Mutex finished_mu;
int finished ABSL_GUARDED_BY(finished_mu) = 0;

// Where a slot's time goes besides the run itself (ms per run): StartRun, the sleep's overshoot,
// ReportMetrics
// + CompleteRun, and the slot's idle gap from the end of its run until its next assignment arrives (which
// includes ReportMetrics + CompleteRun).
struct Breakdown {
  std::vector<double> start, oversleep, finish, gap;
};
Breakdown breakdown ABSL_GUARDED_BY(finished_mu);
std::map<uint32_t, absl::Time> slot_freed ABSL_GUARDED_BY(finished_mu);
absl::Time first_assignment ABSL_GUARDED_BY(finished_mu) = absl::InfiniteFuture();

// One simulated run: start, wait run_ms, report one metric point, complete.
void SimulateRun(v1::WorkerGateway::Stub* gw, const std::string& session, v1::Assignment a, int run_ms) {
  v1::RunAttempt ra;
  ra.set_run_id(a.run_id());
  ra.set_attempt(a.attempt());
  auto call = [&session](grpc::ClientContext* ctx) { AsWorker(ctx, session); };
  absl::Time t0 = absl::Now();
  {
    grpc::ClientContext ctx;
    call(&ctx);
    v1::StartRunRequest req;
    *req.mutable_run() = ra;
    v1::Ack ack;
    gw->StartRun(&ctx, req, &ack);
  }
  absl::Time t1 = absl::Now();
  absl::SleepFor(absl::Milliseconds(run_ms));
  absl::Time t2 = absl::Now();
  {
    absl::MutexLock lock(&finished_mu);
    for (uint32_t slot : a.slots()) slot_freed[slot] = t2;
  }
  {
    grpc::ClientContext ctx;
    call(&ctx);
    v1::Ack ack;
    auto w = gw->ReportMetrics(&ctx, &ack);
    v1::MetricReport r;
    *r.mutable_run() = ra;
    r.mutable_point()->set_kind("final");  // The run's final metrics, as an agent sends them.
    (*r.mutable_point()->mutable_values())["loss"] = 1.0;
    (*r.mutable_point()->mutable_values())["top1"] = 0.5;
    w->Write(r);
    w->WritesDone();
    w->Finish();
  }
  grpc::ClientContext ctx;
  call(&ctx);
  v1::CompleteRunRequest req;
  *req.mutable_run() = ra;
  req.set_outcome(v1::SUCCEEDED);
  v1::Ack ack;
  grpc::Status s = gw->CompleteRun(&ctx, req, &ack);
  if (!s.ok()) {
    std::fprintf(stderr, "CompleteRun %ld: %s\n", a.run_id(), s.error_message().c_str());
    return;
  }
  absl::Time t3 = absl::Now();
  absl::MutexLock lock(&finished_mu);
  ++finished;
  breakdown.start.push_back(Ms(t1 - t0));
  breakdown.oversleep.push_back(Ms(t2 - t1) - run_ms);
  breakdown.finish.push_back(Ms(t3 - t2));
}

void Makespan() {
  const int n = absl::GetFlag(FLAGS_runs), run_ms = absl::GetFlag(FLAGS_run_ms),
            slots = absl::GetFlag(FLAGS_slots);
  std::string db = FreshDb("makespan");
  auto server = StartServer(db);
  auto channel = Channel(server->address());
  auto gw = v1::WorkerGateway::NewStub(channel);
  auto coord = v1::Coordinator::NewStub(channel);
  v1::RegisterResponse reg;
  {
    grpc::ClientContext ctx;
    gw->Register(&ctx, WorkerRequest(slots), &reg);
  }
  const int64_t worker = reg.worker_id();
  std::atomic<bool> done{false};
  std::thread heartbeats([&] {
    while (!done) {
      grpc::ClientContext ctx;
      AsWorker(&ctx, reg.session());
      v1::HeartbeatRequest req;
      req.set_worker_id(worker);
      v1::HeartbeatResponse resp;
      gw->Heartbeat(&ctx, req, &resp);
      absl::SleepFor(absl::Milliseconds(reg.heartbeat_interval_ms()));
    }
  });
  absl::Mutex mu;
  std::vector<std::thread> runs;
  grpc::ClientContext stream_ctx;
  AsWorker(&stream_ctx, reg.session());
  v1::AssignmentsRequest areq;
  areq.set_worker_id(worker);
  auto stream = gw->Assignments(&stream_ctx, areq);
  std::thread reader([&] {
    v1::Assignment a;
    int received = 0;
    while (received < n && stream->Read(&a)) {
      ++received;
      {
        absl::Time now = absl::Now();
        absl::MutexLock lock(&finished_mu);
        first_assignment = std::min(first_assignment, now);
        for (uint32_t slot : a.slots()) {
          auto it = slot_freed.find(slot);
          if (it == slot_freed.end()) continue;
          breakdown.gap.push_back(Ms(now - it->second));
          slot_freed.erase(it);
        }
      }
      absl::MutexLock lock(&mu);
      runs.emplace_back(SimulateRun, gw.get(), reg.session(), a, run_ms);
    }
  });
  absl::SleepFor(absl::Milliseconds(200));  // Let the stream connect before the clock starts.

  absl::Time t0 = absl::Now();
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = BenchSweep("makespan", n);
  v1::SubmitSweepResponse resp;
  {
    grpc::ClientContext ctx;
    grpc::Status s = coord->SubmitSweep(&ctx, req, &resp);
    if (!s.ok()) {
      std::fprintf(stderr, "submit failed: %s\n", s.error_message().c_str());
      std::exit(1);
    }
  }
  // Finished when the driver has had n CompleteRun calls accepted (counted client-side, so that watching for
  // the end adds no load on the coordinator).
  {
    absl::MutexLock lock(&finished_mu);
    auto all_done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(finished_mu) { return finished == n; };
    finished_mu.Await(absl::Condition(&all_done));
  }
  absl::Time t_end = absl::Now();
  absl::Duration makespan = t_end - t0;
  reader.join();
  stream_ctx.TryCancel();
  done = true;
  heartbeats.join();
  for (auto& t : runs) t.join();
  double ideal = static_cast<double>(n) * run_ms / slots;
  double ratio = Ms(makespan) / ideal;
  std::printf(
      "makespan: %d runs x %d ms on %d slots: makespan %.0f ms from submission, ideal %.0f ms, ratio %.4f "
      "(overhead %.2f%%, target <= 2%%: %s)\n",
      n, run_ms, slots, Ms(makespan), ideal, ratio, (ratio - 1) * 100, ratio <= 1.02 ? "met" : "MISSED");
  {
    absl::MutexLock lock(&finished_mu);
    double sched = Ms(t_end - first_assignment);
    std::printf(
        "  submission (validation + expansion + store) until the first assignment %.0f ms; from the first "
        "assignment on %.0f ms, ratio %.4f (overhead %.2f%%)\n",
        Ms(first_assignment - t0), sched, sched / ideal, (sched / ideal - 1) * 100);
  }
  {
    absl::MutexLock lock(&finished_mu);
    auto line = [](const char* what, const std::vector<double>& v) {
      double sum = 0;
      for (double x : v) sum += x;
      std::printf("  %-28s mean %.2f ms, p50 %.2f ms, p99 %.2f ms\n", what, v.empty() ? 0 : sum / v.size(),
                  Percentile(v, 0.5), Percentile(v, 0.99));
    };
    line("StartRun", breakdown.start);
    line("sleep overshoot", breakdown.oversleep);
    line("ReportMetrics + CompleteRun", breakdown.finish);
    line("slot idle: run end -> next", breakdown.gap);
  }
  server->Shutdown();
  Cleanup(db);
}

// One SubmitSweep of `spec` to a fresh server; returns the time until it was acknowledged.
absl::Duration SubmitOnce(const v1::SweepSpec& spec, server::SweepExpander expand, const std::string& name) {
  std::string db = FreshDb(name);
  auto server = StartServer(db, std::move(expand));
  auto coord = v1::Coordinator::NewStub(Channel(server->address()));
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = spec;
  absl::Time t0 = absl::Now();
  v1::SubmitSweepResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = coord->SubmitSweep(&ctx, req, &resp);
  absl::Duration ack = absl::Now() - t0;
  if (!s.ok() || resp.runs_size() != spec.grid(0).values_size()) {
    std::fprintf(stderr, "submit failed: %s (%d runs)\n", s.error_message().c_str(), resp.runs_size());
    std::exit(1);
  }
  server->Shutdown();
  Cleanup(db);
  return ack;
}

void Submit() {
  const int n = absl::GetFlag(FLAGS_submit_runs);
  v1::SweepSpec spec = BenchSweep("submit", n);
  absl::Duration ack = SubmitOnce(spec, ServerExpander(), "submit");
  // The same submission with the expansion done beforehand: what the coordinator itself adds (idempotency and
  // fit checks, reuse lookups, storing sweep, runs, labels and history in one transaction, the response).
  absl::Time e0 = absl::Now();
  auto expanded = server::ExpandWithSchemas(spec);
  absl::Duration expand = absl::Now() - e0;
  if (!expanded.ok()) std::exit(1);
  absl::Duration own = SubmitOnce(
      spec, [&expanded](const v1::SweepSpec&) { return *expanded; }, "submit-pre");
  std::printf(
      "submit: %d-run sweep acknowledged and stored in %.0f ms, ratio to the 2000 ms target %.3f (%s); "
      "ExpandSweep alone (serial) %.0f ms; the coordinator's own part (expansion precomputed) %.0f ms, ratio "
      "%.3f\n",
      n, Ms(ack), Ms(ack) / 2000, Ms(ack) <= 2000 ? "met" : "MISSED", Ms(expand), Ms(own), Ms(own) / 2000);
}

void Heartbeats() {
  const int workers = absl::GetFlag(FLAGS_workers), seconds = absl::GetFlag(FLAGS_heartbeat_s);
  const int threads = absl::GetFlag(FLAGS_client_threads);
  std::string db = FreshDb("heartbeat");
  auto server = StartServer(db);
  std::vector<std::unique_ptr<v1::WorkerGateway::Stub>> stubs;
  for (int t = 0; t < threads; ++t)
    stubs.push_back(v1::WorkerGateway::NewStub(Channel(server->address(), t + 1)));
  std::vector<int64_t> ids(workers);
  std::vector<std::string> sessions(workers);
  for (int i = 0; i < workers; ++i) {
    grpc::ClientContext ctx;
    v1::RegisterResponse reg;
    stubs[0]->Register(&ctx, WorkerRequest(1), &reg);
    ids[i] = reg.worker_id();
    sessions[i] = reg.session();
  }
  std::vector<std::vector<double>> latencies(threads);
  std::atomic<int> errors{0};
  absl::Time start = absl::Now() + absl::Milliseconds(100);
  absl::Time end = start + absl::Seconds(seconds);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      // Worker i beats at start + i/W s + k s; this thread owns workers t, t + threads, ...
      for (int k = 0; k < seconds; ++k) {
        for (int i = t; i < workers; i += threads) {
          absl::Time due = start + absl::Seconds(k) + absl::Milliseconds(1000.0 * i / workers);
          if (due >= end) break;
          absl::SleepFor(due - absl::Now());
          grpc::ClientContext ctx;
          AsWorker(&ctx, sessions[i]);
          v1::HeartbeatRequest req;
          req.set_worker_id(ids[i]);
          v1::HeartbeatResponse resp;
          absl::Time c0 = absl::Now();
          grpc::Status s = stubs[t]->Heartbeat(&ctx, req, &resp);
          latencies[t].push_back(Ms(absl::Now() - c0));
          if (!s.ok()) ++errors;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  std::vector<double> all;
  for (auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  double p50 = Percentile(all, 0.5), p99 = Percentile(all, 0.99), max = Percentile(all, 1.0);
  std::printf(
      "heartbeat: %d workers at 1 Hz for %d s: %zu calls, %d errors, p50 %.2f ms, p99 %.2f ms, max %.2f ms; "
      "p99 ratio to the 20 ms target %.3f (%s)\n",
      workers, seconds, all.size(), errors.load(), p50, p99, max, p99 / 20, p99 <= 20 ? "met" : "MISSED");
  server->Shutdown();
  Cleanup(db);
}

// Fills the database with `n` runs of one sweep (a tenth succeeded with metrics, the rest queued) and a
// worker.
absl::Status Populate(const std::string& db, int n) {
  NM_ASSIGN_OR_RETURN(auto store, server::Store::Open(db));
  v1::SweepSpec spec = BenchSweep("restart", 1);
  auto expanded = server::ExpandWithSchemas(spec);
  if (!expanded.ok()) return expanded.status();
  server::NewRun proto = (*expanded)[0];
  v1::MetricPoint finals;
  (*finals.mutable_values())["top1"] = 0.5;
  server::ReuseSource done{0, finals.SerializeAsString()};
  return store->Write([&](server::Database* d) -> absl::Status {
    NM_ASSIGN_OR_RETURN(int64_t sweep, server::InsertSweep(d, spec, 1, {}));
    google::protobuf::RepeatedPtrField<v1::Slot> slots;
    slots.Add()->set_index(0);
    NM_RETURN_IF_ERROR(server::UpsertWorker(d, 0, "bench", slots, "", 1).status());
    for (int i = 0; i < n; ++i) {
      server::NewRun r = proto;
      r.index = i;
      r.labels = {{"seed", absl::StrCat(i)}};
      r.content_hash = absl::StrCat(proto.content_hash, "-", i);
      const bool succeeded = i % 10 == 0;
      NM_ASSIGN_OR_RETURN(int64_t id, server::InsertRun(d, sweep, r, 1, succeeded ? &done : nullptr));
      NM_RETURN_IF_ERROR(server::AppendStateChange(d, id, v1::RUN_STATE_UNSPECIFIED,
                                                   succeeded ? v1::SUCCEEDED : v1::QUEUED, 0, 1, "bench"));
    }
    return absl::OkStatus();
  });
}

void Restart() {
  const int n = absl::GetFlag(FLAGS_restart_runs);
  std::string db = FreshDb("restart");
  absl::Time p0 = absl::Now();
  absl::Status populated = Populate(db, n);
  if (!populated.ok()) {
    std::fprintf(stderr, "populate failed: %s\n", populated.ToString().c_str());
    std::exit(1);
  }
  absl::Duration populate = absl::Now() - p0;
  absl::Time t0 = absl::Now();
  auto server = StartServer(db);
  auto coord = v1::Coordinator::NewStub(Channel(server->address()));
  grpc::ClientContext ctx;
  v1::GetSweepRequest req;
  req.set_sweep_id(1);
  v1::Sweep sweep;
  grpc::Status s = coord->GetSweep(&ctx, req, &sweep);
  absl::Duration serving = absl::Now() - t0;
  uint32_t total = 0;
  for (const auto& [state, count] : sweep.run_counts()) total += count;
  if (!s.ok() || total != static_cast<uint32_t>(n)) {
    std::fprintf(stderr, "restart check failed: %s (%u runs)\n", s.error_message().c_str(), total);
    std::exit(1);
  }
  std::printf(
      "restart: %d runs in the database (filled in %.0f ms): serving and answered GetSweep with all "
      "counts in %.0f ms, ratio to the 2000 ms target %.3f (%s)\n",
      n, Ms(populate), Ms(serving), Ms(serving) / 2000, Ms(serving) <= 2000 ? "met" : "MISSED");
  server->Shutdown();
  Cleanup(db);
}

}  // namespace
}  // namespace nmsparse::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string scenario = absl::GetFlag(FLAGS_scenario);
  bool all = scenario == "all", any = false;
  if (all || scenario == "submit") any = true, nmsparse::bench::Submit();
  if (all || scenario == "restart") any = true, nmsparse::bench::Restart();
  if (all || scenario == "heartbeat") any = true, nmsparse::bench::Heartbeats();
  if (all || scenario == "makespan") any = true, nmsparse::bench::Makespan();
  if (!any) {
    std::fprintf(stderr, "unknown --scenario=%s (makespan, submit, heartbeat, restart, all)\n",
                 scenario.c_str());
    return 2;
  }
  return 0;
}
