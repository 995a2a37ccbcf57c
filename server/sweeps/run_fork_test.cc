// PlanFork with the production expander: a fork's spec is its parent's with --set applied through the key
// table of nmctl submit, its lineage is part of its content hash, and every refusal names the run, the key
// and the values.
#include "server/sweeps/run_fork.h"

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "server/sweeps/schemas_expander.h"

namespace nmsparse::server {
namespace {

constexpr char kSynthetic[] = "{dataset: synthetic, synthetic_size: 320, batch_size: 32}";

// By default 320 synthetic images in batches of 32: 10 steps per epoch, 20 in the parent's 2 epochs.
RunRecord Parent(const std::string& data = kSynthetic) {
  auto config = ParseExperimentYaml(R"(name: parent
model: {name: vit_nano_patch7_28}
data: )" + data + R"(
schedule: {epochs: 2}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
)",
                                    "parent.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  RunRecord r;
  r.run.set_id(5);
  r.run.set_state(v1::SUCCEEDED);
  r.run.set_attempt(2);
  r.run.set_max_retries(1);
  if (config.ok()) r.run.set_resolved_spec(CanonicalYaml(*config));
  (*r.run.mutable_labels())["recipe"] = "srste";
  r.label_order = {"recipe"};
  r.gpus = 1;
  return r;
}

v1::ForkRunRequest Request(std::vector<std::string> sets) {
  v1::ForkRunRequest req;
  req.set_run_id(5);
  for (const std::string& s : sets) req.add_set(s);
  return req;
}

absl::StatusOr<ForkPlan> Plan(const RunRecord& parent, std::vector<std::string> sets,
                              RecordedProgress progress = {20, 2}) {
  return PlanFork(parent, "sweep", progress, Request(std::move(sets)), ExpandWithSchemas);
}

TEST(RunForkTest, LongerFineTuneKeepsLineageInItsHash) {
  auto plan = Plan(Parent(), {"schedule.epochs=4"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const NewRun& run = plan->run;
  EXPECT_NE(run.resolved_spec.find("\n  epochs: 4\n"), std::string::npos) << run.resolved_spec;
  EXPECT_EQ(run.lineage.parent_run_id(), 5);
  EXPECT_EQ(run.lineage.parent_attempt(), 2u);
  EXPECT_EQ(run.lineage.parent_step(), 20u);
  ASSERT_EQ(run.lineage.overrides_size(), 1);
  EXPECT_EQ(run.lineage.overrides(0), "schedule.epochs=4");
  EXPECT_EQ(run.max_retries, 1u);
  EXPECT_EQ(plan->sweep.name(), "sweep-fork-of-5");
  ASSERT_EQ(run.labels.size(), 2u);
  EXPECT_EQ(run.labels[1], (std::pair<std::string, std::string>("fork_of", "5")));
  // The same spec submitted fresh has another hash, and so has a fork of another attempt of the parent.
  v1::SweepSpec fresh;
  fresh.set_base(plan->sweep.base());
  auto plain = ExpandWithSchemas(fresh);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)[0].resolved_spec, run.resolved_spec);
  EXPECT_NE((*plain)[0].content_hash, run.content_hash);
  RunRecord later = Parent();
  later.run.set_attempt(3);
  auto again = Plan(later, {"schedule.epochs=4"});
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->run.content_hash, run.content_hash);
  EXPECT_EQ(Plan(Parent(), {"schedule.epochs=4"})->run.content_hash, run.content_hash);
}

TEST(RunForkTest, RefusesWhatTheCheckpointCannotStartFrom) {
  auto message = [](const absl::StatusOr<ForkPlan>& plan) { return std::string(plan.status().message()); };
  auto unknown = Plan(Parent(), {"schedule.epochz=4"});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(message(unknown).find("fork of run 5: --set schedule.epochz=4: "), std::string::npos)
      << message(unknown);

  auto shorter = Plan(Parent(), {"schedule.epochs=1"});
  EXPECT_EQ(shorter.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(message(shorter).find(
                "schedule: its 1 trained epochs make 10 steps (10 per epoch), fewer than step 20"),
            std::string::npos)
      << message(shorter);

  // The run's length is the epochs it trains: a cooldown epoch reaches step 20 (issue 24).
  EXPECT_TRUE(Plan(Parent(), {"schedule.epochs=1", "schedule.cooldown_epochs=1"}).ok());

  // Another architecture: every resolved key that differs, with both values and the --set that did it.
  auto model = Plan(Parent(), {"model.depth=3", "model.embed_dim=64"});
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(
      message(model).find("fork of run 5: model.embed_dim: 64 differs from the parent's 32; "
                          "model.depth: 3 differs from the parent's 2 (--set model.depth=3 "
                          "model.embed_dim=64); a fork starts from its parent's checkpoint and keeps its "
                          "architecture"),
      std::string::npos)
      << message(model);
  auto name = Plan(Parent(), {"model.name=vit_micro_patch4_28"});
  EXPECT_NE(message(name).find("model.patch_size: 4 differs from the parent's 7"), std::string::npos)
      << message(name);
  auto unknown_model = Plan(Parent(), {"model.name=vit_huge_typo"});
  EXPECT_FALSE(unknown_model.ok());
  EXPECT_NE(message(unknown_model).find("fork of run 5: "), std::string::npos) << message(unknown_model);

  auto seed = Plan(Parent(), {"seed=3"});
  EXPECT_NE(message(seed).find("seed: 3 differs from the parent's 0"), std::string::npos) << message(seed);

  RunRecord running = Parent();
  running.run.set_state(v1::RUNNING);
  auto active = Plan(running, {});
  EXPECT_EQ(active.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(message(active).find("run 5 is RUNNING"), std::string::npos) << message(active);

  auto fresh = Plan(Parent(), {}, RecordedProgress{});
  EXPECT_NE(message(fresh).find("run 5 recorded no training step"), std::string::npos) << message(fresh);

  RunRecord reused = Parent();
  reused.run.set_reused_from(3);
  EXPECT_NE(message(Plan(reused, {})).find("fork run 3 instead"), std::string::npos);
}

// The checkpoint fits any spelling of the parent's architecture, and dropout rates are not part of it.
// A fork naming another weights file with its parent's digest would fail at nmtrain's start: refused here,
// naming both keys; with the new file's digest it forks, and the digest is in the fork's spec.
TEST(RunForkTest, AnotherWeightsFileNeedsItsOwnDigest) {
  const std::string a(64, 'a'), b(64, 'b');
  RunRecord parent = Parent();
  auto spec = ParseExperimentYaml(parent.run.resolved_spec(), "");
  ASSERT_TRUE(spec.ok()) << spec.status();
  spec->model.initial_checkpoint = "/w/a.safetensors";
  spec->model.initial_checkpoint_sha256 = a;
  parent.run.set_resolved_spec(CanonicalYaml(*spec));
  auto kept = Plan(parent, {"model.initial_checkpoint=/w/b.safetensors"});
  ASSERT_FALSE(kept.ok());
  EXPECT_EQ(kept.status().message(),
            "fork of run 5: --set model.initial_checkpoint=/w/b.safetensors needs --set "
            "model.initial_checkpoint_sha256 beside it: the parent's " +
                a +
                " is of /w/a.safetensors (nmctl fork fills it in where it can read the file; else sha256sum "
                "FILE on the worker)");
  auto own =
      Plan(parent, {"model.initial_checkpoint=/w/b.safetensors", "model.initial_checkpoint_sha256=" + b});
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_NE(own->run.resolved_spec.find("initial_checkpoint_sha256: " + b), std::string::npos);
  EXPECT_TRUE(Plan(parent, {"schedule.epochs=3"}).ok());  // The same file keeps its digest.
}

TEST(RunForkTest, SameArchitectureRespelledOrWithOtherDropoutForks) {
  auto respelled = Plan(Parent(), {"model.depth=2", "model.embed_dim=32", "model.drop_path_rate=0.1"});
  ASSERT_TRUE(respelled.ok()) << respelled.status();
  EXPECT_NE(respelled->run.resolved_spec.find("drop_path_rate: 0.1\n"), std::string::npos)
      << respelled->run.resolved_spec;
}

// Shards: the steps per epoch are known only where the shards are, so the schedule is checked in epochs.
TEST(RunForkTest, ScheduleInEpochsWhereTheSpecDoesNotTellSteps) {
  const RunRecord parent = Parent("{dataset: shards, path: /data/shards, batch_size: 32}");
  const RecordedProgress into_second_epoch{150, 1};
  auto shorter = Plan(parent, {"schedule.epochs=1"}, into_second_epoch);
  EXPECT_EQ(shorter.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(
      shorter.status().message().find("schedule: its 1 trained epochs end before epoch 2 where run 5 got to"),
      std::string::npos)
      << shorter.status();
  EXPECT_TRUE(Plan(parent, {"schedule.epochs=3"}, into_second_epoch).ok());
}

}  // namespace
}  // namespace nmsparse::server
