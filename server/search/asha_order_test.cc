// ASHA fair to order (issue 40): the same grid written with its learning rates ascending and descending gets
// the same early-stopping decisions when every run reports the same results. Through the real coordinator,
// store and schemas expander (content hashes, dispatch order); a fake worker reports each run's top-1 as a
// fixed function of its learning rate, in the order the coordinator assigned the runs.
#include <grpcpp/grpcpp.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "server/store/sqlite.h"
#include "server/sweeps/schemas_expander.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::FakeWorker;
using testing::TempDbPath;
using testing::TestServer;

// A run's top-1 after epoch `epoch` (0-based): a bowl in log10(lr) around 4e-3, rising with the epochs.
double Top1(double lr, int epoch) {
  const double x = std::log10(lr) + 2.4;
  return 0.5 + 0.1 * epoch - 0.05 * x * x;
}

v1::SweepSpec LrSweep(const std::vector<std::string>& lrs) {
  v1::SweepSpec s;
  s.set_name("asha-order");
  s.set_seed(1);
  s.set_base(
      "model: {name: vit_micro_patch4_28}\n"
      "data: {dataset: fashion_mnist, train_subset: 2000, batch_size: 100}\n"
      "schedule: {epochs: 4}\n"
      "sparsity: {recipe: SRSTE, n_sparsity: 1, m_sparsity: 8, sparsity_loc: FF}\n");
  v1::GridAxis* axis = s.add_grid();
  axis->set_name("optimizer.lr");
  for (const std::string& lr : lrs) {
    v1::AxisValue* v = axis->add_values();
    v->set_label(lr);
    (*v->mutable_set())["optimizer.lr"] = lr;
  }
  v1::EarlyStopping* es = s.mutable_early_stopping();
  es->set_policy("asha");
  es->set_metric("top1");
  es->set_mode("max");
  es->set_resource("epoch");
  es->set_min_resource(1);
  es->set_reduction_factor(2);  // Rungs after epochs 1 and 2; min_peers: its default, 2.
  return s;
}

// "rung R lr L" -> promoted, for every decision the sweep took.
using Decisions = std::map<std::string, bool>;

Decisions RunSweep(const std::string& name, const std::vector<std::string>& lrs) {
  const std::string db = TempDbPath(name);
  TestServer server(db, 10000, 5000, ExpandWithSchemas);
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = LrSweep(lrs);
  v1::SubmitSweepResponse resp;
  {
    grpc::ClientContext ctx;
    const grpc::Status s = server.coordinator().SubmitSweep(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  std::map<int64_t, std::string> lr_of;
  for (const v1::Run& r : resp.runs()) lr_of[r.id()] = r.labels().at("optimizer.lr");
  FakeWorker worker(&server.gateway(), static_cast<int>(lrs.size()));
  std::vector<v1::RunAttempt> order;  // The coordinator's dispatch order.
  for (const v1::Assignment& a : worker.WaitAssignments(lrs.size())) {
    order.push_back(testing::Attempt(a.run_id(), a.attempt()));
    EXPECT_TRUE(testing::GatewayStart(server.gateway(), order.back()).ok());
  }
  EXPECT_EQ(order.size(), lrs.size());
  for (int epoch : {0, 1}) {  // Each rung in dispatch order, by the runs still training.
    for (const v1::RunAttempt& ra : order) {
      v1::GetRunRequest get;
      get.set_run_id(ra.run_id());
      v1::GetRunResponse run;
      grpc::ClientContext ctx;
      EXPECT_TRUE(server.coordinator().GetRun(&ctx, get, &run).ok());
      if (run.run().state() != v1::RUNNING || !run.run().message().empty()) continue;  // Asked to stop.
      double lr = 0;
      EXPECT_TRUE(absl::SimpleAtod(lr_of[ra.run_id()], &lr));
      EXPECT_TRUE(testing::ReportEpoch(server.gateway(), ra, epoch, {{"top1", Top1(lr, epoch)}}).ok());
    }
  }
  Decisions out;
  auto database = Database::Open(db);
  EXPECT_TRUE(database.ok()) << database.status();
  auto st = (*database)->Prepare("SELECT rung, run_id, promoted FROM rung_results");
  EXPECT_TRUE(st.ok()) << st.status();
  while (true) {
    auto row = (*st)->Step();
    EXPECT_TRUE(row.ok()) << row.status();
    if (!row.ok() || !*row) break;
    EXPECT_NE((*st)->Int(2), 2) << "a result still waits for its decision";
    out["rung " + std::to_string((*st)->Int(0)) + " lr " + lr_of[(*st)->Int(1)]] = (*st)->Int(2) == 1;
  }
  return out;
}

TEST(AshaOrderTest, AscendingAndDescendingGridsGetTheSamePromotions) {
  const std::vector<std::string> ascending = {"0.0001", "0.0003", "0.001", "0.003", "0.01", "0.03"};
  const std::vector<std::string> descending(ascending.rbegin(), ascending.rend());
  const Decisions up = RunSweep("asha_order_up", ascending);
  const Decisions down = RunSweep("asha_order_down", descending);
  EXPECT_EQ(up, down);
  int stopped = 0;
  for (const auto& [key, promoted] : up) stopped += !promoted;
  EXPECT_GE(stopped, 3) << "with η = 2, about half the runs at a rung stop";
  EXPECT_EQ(up.count("rung 0 lr 0.003"), 1u);
  EXPECT_TRUE(up.at("rung 0 lr 0.003")) << "the best learning rate goes on";
}

}  // namespace
}  // namespace nmsparse::server
