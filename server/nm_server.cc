#include "server/nm_server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "grpcpp/grpcpp.h"
#include "server/api/coordinator_service.h"
#include "server/api/model_export_relay.h"
#include "server/api/worker_gateway_service.h"
#include "server/auth/token_authenticator.h"
#include "server/change_signal.h"
#include "server/cluster/worker_pool.h"
#include "server/scheduling/assignment_hub.h"
#include "server/scheduling/lease_manager.h"
#include "server/scheduling/scheduler.h"
#include "server/store/clock.h"
#include "server/store/store.h"
#include "server/store/token_table.h"
#include "server/store/worker_table.h"
#include "server/sweeps/search_proposer.h"

namespace nmsparse::server {

struct NmServer::Parts {
  ServerOptions options;
  std::unique_ptr<Store> store;
  AssignmentHub hub;
  ModelExportRelay exports;
  ChangeSignal changes;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<LeaseManager> leases;
  std::unique_ptr<WorkerPool> pool;  // Only with a launcher.
  std::unique_ptr<SearchProposer> proposer;
  std::unique_ptr<CoordinatorService> coordinator;
  std::unique_ptr<WorkerGatewayService> gateway;
  std::unique_ptr<grpc::Server> server;
  TransportPlan transport;
  std::shared_ptr<TokenAuthenticator> authenticator;
};

namespace {

// The credentials the port is served with, from the flags and whether the database holds tokens.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(
    const ServerOptions& options, Store* store, TransportPlan* plan,
    std::shared_ptr<TokenAuthenticator>* authenticator_out) {
  bool has_tokens = false;
  NM_RETURN_IF_ERROR(store->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(has_tokens, HasTokens(db));
    return absl::OkStatus();
  }));
  TransportSecurityOptions security = options.security;
  security.listen = options.listen;
  NM_ASSIGN_OR_RETURN(*plan, PlanTransport(security, has_tokens));
  auto authenticator = std::make_shared<TokenAuthenticator>(store, !security.tls_client_ca_file.empty(),
                                                            [] { return NowMs(); });
  *authenticator_out = authenticator;
  return BuildServerCredentials(*plan, security, std::move(authenticator));
}

}  // namespace

NmServer::NmServer(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

NmServer::~NmServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<NmServer>> NmServer::Start(ServerOptions options) {
  auto p = std::make_unique<Parts>();
  if (!options.expand) return absl::InvalidArgumentError("ServerOptions.expand is empty");
  p->options = options;
  NM_ASSIGN_OR_RETURN(p->store, Store::Open(options.db_path));
  NM_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                      Credentials(options, p->store.get(), &p->transport, &p->authenticator));
  // Workers registered before a restart get a whole lease to come back before their runs are requeued.
  NM_RETURN_IF_ERROR(p->store->Write([](Database* db) { return RenewAllLeases(db, NowMs()); }));
  p->scheduler =
      std::make_unique<Scheduler>(p->store.get(), &p->hub, absl::Milliseconds(options.schedule_interval_ms));
  p->scheduler->SetRendezvousPorts(options.rendezvous_first_port, options.rendezvous_last_port);
  LeaseOptions lease{options.lease_ms, options.grace_ms};
  Scheduler* scheduler = p->scheduler.get();
  ChangeSignal* changes = &p->changes;
  p->proposer = std::make_unique<SearchProposer>(
      p->store.get(), options.expand,
      [scheduler, changes] {
        scheduler->Kick();
        changes->Notify();
      },
      options.before_proposal_draw);
  SearchProposer* proposer = p->proposer.get();
  p->leases = std::make_unique<LeaseManager>(p->store.get(), lease, [scheduler, changes, proposer] {
    proposer->NotifyAll();  // Runs may have ended with their leases.
    scheduler->Kick();
    changes->Notify();
  });
  if (options.launcher) p->pool = std::make_unique<WorkerPool>(p->store.get(), options.launcher);
  p->coordinator =
      std::make_unique<CoordinatorService>(p->store.get(), scheduler, p->pool.get(), changes, options.expand,
                                           options.max_runs_per_sweep, &p->hub, &p->exports);
  p->gateway = std::make_unique<WorkerGatewayService>(p->store.get(), scheduler, &p->hub, changes, lease,
                                                      options.caps, proposer, &p->exports);

  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials, &port);
  builder.RegisterService(p->coordinator.get());
  builder.RegisterService(p->gateway.get());
  // One coordinator per address: without this gRPC sets SO_REUSEPORT and a second nmserver would share the
  // port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Bounded both ways (docs/reliability.md): a larger request is refused, a larger answer is not sent.
  builder.SetMaxReceiveMessageSize(limits::kMaxRequestBytes);
  builder.SetMaxSendMessageSize(limits::kMaxResponseBytes);
  p->server = builder.BuildAndStart();
  if (!p->server || port == 0)
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  p->scheduler->Start();
  p->leases->Start();
  // Its first pass serves the search sweeps whose runs ended while no coordinator was there, after the port
  // is open: no sweep's proposals hold up serving.
  p->proposer->Start();
  if (p->pool) p->pool->Start();
  std::unique_ptr<NmServer> out(new NmServer(std::move(p)));
  out->port_ = port;
  return out;
}

std::string NmServer::address() const {
  std::string host = parts_->options.listen.substr(0, parts_->options.listen.rfind(':'));
  return absl::StrCat(host, ":", port_);
}

const TransportPlan& NmServer::transport() const { return parts_->transport; }

CoordinatorService* NmServer::coordinator() const { return parts_->coordinator.get(); }

const TokenAuthenticator* NmServer::authenticator() const {
  return parts_->transport.authenticate ? parts_->authenticator.get() : nullptr;
}

void NmServer::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  parts_->hub.Shutdown();
  parts_->changes.Close();
  parts_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  parts_->server->Wait();
  if (parts_->pool) parts_->pool->Stop();
  parts_->proposer->Stop();
  parts_->scheduler->Stop();
  parts_->leases->Stop();
}

}  // namespace nmsparse::server
