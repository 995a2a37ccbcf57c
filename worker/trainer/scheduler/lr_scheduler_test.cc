// nmsparse's schedulers against timm's: testdata/timm_lr_schedules.txt holds, per case, timm's rate at every
// optimizer update of the run train.py trains (tools/timm_sched_golden.py; tools/check_timm_goldens.sh
// regenerates it with timm and diffs). Every rate must agree to 1e-9 relative (double against double), and
// the run's length with train.py's num_epochs.
#include "worker/trainer/scheduler/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "schemas/spec_keys.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {
namespace {

struct GoldenCase {
  std::string name;
  int64_t updates_per_epoch = 0;
  double lr = 0.0;
  int64_t trained_epochs = 0;
  std::string
      spec_kind;  // "schedule" (a flow map of the section) or "reference" (a reference config's file).
  std::string spec;
  std::vector<double> top1, lrs;
};

std::vector<double> Numbers(const std::string& text) {
  std::vector<double> out;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    double v = 0;
    EXPECT_TRUE(absl::SimpleAtod(word, &v)) << word;
    out.push_back(v);
  }
  return out;
}

std::vector<GoldenCase> ReadGolden() {
  std::ifstream in("worker/trainer/testdata/timm_lr_schedules.txt");
  EXPECT_TRUE(in.good());
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    const std::string head = line.substr(0, space), rest = line.substr(space + 1);
    if (head == "case") {
      GoldenCase c;
      std::vector<std::string> words = absl::StrSplit(rest, ' ');
      c.name = words[0];
      for (size_t i = 1; i < words.size(); ++i) {
        std::pair<std::string, std::string> kv = absl::StrSplit(words[i], '=');
        if (kv.first == "updates_per_epoch") {
          EXPECT_TRUE(absl::SimpleAtoi(kv.second, &c.updates_per_epoch));
        }
        if (kv.first == "lr") {
          EXPECT_TRUE(absl::SimpleAtod(kv.second, &c.lr));
        }
        if (kv.first == "trained_epochs") {
          EXPECT_TRUE(absl::SimpleAtoi(kv.second, &c.trained_epochs));
        }
      }
      cases.push_back(c);
    } else if (head == "schedule" || head == "reference") {
      cases.back().spec_kind = head;
      cases.back().spec = rest;
    } else if (head == "top1") {
      cases.back().top1 = Numbers(rest);
    } else if (head == "lrs") {
      cases.back().lrs = Numbers(rest);
    }
  }
  return cases;
}

// The schedule section of a case, read by the spec's key table (and, for a reference config, its mapping).
ScheduleConfig ScheduleOf(const GoldenCase& c) {
  if (c.spec_kind == "reference") {
    auto config = LoadExperimentFile(c.spec);
    EXPECT_TRUE(config.ok()) << config.status();
    EXPECT_NEAR(config->optimizer.lr, c.lr, 1e-15) << "the reference's lr from lr_base";
    return config->schedule;
  }
  ExperimentConfig config;
  const SpecKey<ExperimentConfig>* section = ExperimentKeys().Find("schedule");
  EXPECT_TRUE(section->read(YAML::Load(c.spec), "schedule", &config).ok()) << c.spec;
  return config.schedule;
}

TEST(LrSchedulerTest, EveryUpdateOfEveryRunEqualsTimms) {
  const std::vector<GoldenCase> cases = ReadGolden();
  ASSERT_GE(cases.size(), 12u);
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<LrScheduler> scheduler = MakeLrScheduler(ScheduleOf(c), c.lr, c.updates_per_epoch);
    ASSERT_EQ(scheduler->TrainedEpochs(), c.trained_epochs);
    ASSERT_EQ(static_cast<int64_t>(c.lrs.size()), c.trained_epochs * c.updates_per_epoch);
    ASSERT_EQ(static_cast<int64_t>(c.top1.size()), c.trained_epochs);
    for (int64_t epoch = 0; epoch < c.trained_epochs; ++epoch) {
      for (int64_t u = 0; u < c.updates_per_epoch; ++u) {
        const int64_t update = epoch * c.updates_per_epoch + u;
        const double want = c.lrs[update];
        ASSERT_NEAR(scheduler->At(epoch, update), want, 1e-9 * std::abs(want))
            << "epoch " << epoch << ", update " << update;
      }
      scheduler->EndEpoch(epoch, c.top1[epoch]);
    }
  }
}

// A plateau schedule resumed from its State() after any epoch (as from a checkpoint) continues with timm's
// rates of the uninterrupted run: the golden's top-1 sequence reduces the rate part-way through.
TEST(LrSchedulerTest, PlateauResumedFromItsStateAfterAnyEpochKeepsTimmsRates) {
  const std::vector<GoldenCase> cases = ReadGolden();
  auto plateau =
      std::find_if(cases.begin(), cases.end(), [](const GoldenCase& c) { return c.name == "plateau"; });
  ASSERT_NE(plateau, cases.end());
  const GoldenCase& c = *plateau;
  ASSERT_NE(c.lrs.front(), c.lrs.back()) << "the case must reduce the rate";
  for (int64_t stop = 1; stop < c.trained_epochs; ++stop) {
    SCOPED_TRACE("resumed after epoch " + std::to_string(stop - 1));
    std::unique_ptr<LrScheduler> before = MakeLrScheduler(ScheduleOf(c), c.lr, c.updates_per_epoch);
    for (int64_t epoch = 0; epoch < stop; ++epoch) before->EndEpoch(epoch, c.top1[epoch]);
    std::unique_ptr<LrScheduler> resumed = MakeLrScheduler(ScheduleOf(c), c.lr, c.updates_per_epoch);
    resumed->LoadState(before->State());
    for (int64_t epoch = stop; epoch < c.trained_epochs; ++epoch) {
      const int64_t update = epoch * c.updates_per_epoch;
      ASSERT_NEAR(resumed->At(epoch, update), c.lrs[update], 1e-9 * std::abs(c.lrs[update]))
          << "epoch " << epoch;
      resumed->EndEpoch(epoch, c.top1[epoch]);
    }
  }
}

TEST(LrSchedulerTest, PlateauRefusesAStateOfAnotherShape) {
  ScheduleConfig s;
  s.sched = "plateau";
  s.epochs = 4;
  EXPECT_THROW(MakeLrScheduler(s, 0.1, 1)->LoadState({1.0, 2.0}), std::invalid_argument);
}

// nmsparse's warmup_cosine keeps its rates: the warm-up inside `epochs`, the cosine over the updates after
// it.
TEST(LrSchedulerTest, WarmupCosineKeepsNmsparsesSchedule) {
  ScheduleConfig s;
  s.epochs = 11;
  s.warmup_epochs = 1;
  s.warmup_lr = 1e-6;
  s.min_lr = 1e-5;
  auto scheduler = MakeLrScheduler(s, 1e-3, 10);
  EXPECT_EQ(scheduler->TrainedEpochs(), 11);
  EXPECT_DOUBLE_EQ(scheduler->At(0, 0), 1e-6);
  EXPECT_NEAR(scheduler->At(0, 5), 1e-6 + 0.5 * (1e-3 - 1e-6), 1e-12);
  EXPECT_DOUBLE_EQ(scheduler->At(1, 10), 1e-3);
  EXPECT_NEAR(scheduler->At(6, 60), 1e-5 + 0.5 * (1e-3 - 1e-5), 1e-12);
  EXPECT_NEAR(scheduler->At(10, 109), 1e-5 + 0.5 * (1e-3 - 1e-5) * (1 + std::cos(M_PI * 99 / 100)), 1e-12);
}

// Scheduler keys that do not fit the scheduler, or out of range, are refused naming the key.
TEST(LrSchedulerTest, BadKeysAreRefusedByName) {
  const std::string base = "model: {name: vit_nano_patch7_28}\ndata: {dataset: synthetic}\n";
  for (const auto& [schedule, key] : std::vector<std::pair<std::string, std::string>>{
           {"{sched: tanh}", "schedule.sched"},
           {"{sched: poly}", "schedule.sched"},
           {"{warmup_prefix: true}", "schedule.warmup_prefix"},
           {"{sched_on_updates: true}", "schedule.sched_on_updates"},
           {"{sched: plateau, sched_on_updates: true}", "schedule.sched_on_updates"},
           {"{sched: multistep, decay_milestones: [5, 3]}", "schedule.decay_milestones"},
           {"{sched: multistep, decay_milestones: [0]}", "schedule.decay_milestones"},
           {"{sched: multistep, decay_milestones: 5}", "schedule.decay_milestones"},
           {"{sched: multistep}", "schedule.decay_milestones"},
           {"{sched: cosine, lr_cycle_limit: 0}", "schedule.lr_cycle_limit"},
           {"{sched: cosine, lr_cycle_mul: 0}", "schedule.lr_cycle_mul"},
           {"{sched: cosine, lr_k_decay: -1}", "schedule.lr_k_decay"},
           {"{sched: step, decay_epochs: 0}", "schedule.decay_epochs"},
           {"{sched: cosine, cooldown_epochs: -1}", "schedule.cooldown_epochs"},
       }) {
    auto config = ParseExperimentYaml(base + "schedule: " + schedule + "\n", "spec.yaml");
    absl::Status st = config.ok() ? ValidateExperiment(*config) : config.status();
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << schedule;
    EXPECT_NE(st.message().find(key), std::string::npos) << schedule << ": " << st.message();
  }
}

// Spec defaults leave earlier specs' canonical text as it was; a timm scheduler's keys are written.
TEST(LrSchedulerTest, KeysAreWrittenOnlyAwayFromTheirDefaults) {
  const std::string base = "model: {name: vit_nano_patch7_28}\ndata: {dataset: synthetic}\n";
  auto plain = ParseExperimentYaml(base, "a.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(CanonicalYaml(*plain).find(" sched:"), std::string::npos);
  auto timm = ParseExperimentYaml(
      base + "schedule: {sched: multistep, decay_milestones: [3, 7], cooldown_epochs: 2}\n", "b.yaml");
  ASSERT_TRUE(timm.ok()) << timm.status();
  const std::string text = CanonicalYaml(*timm);
  EXPECT_NE(text.find("sched: multistep"), std::string::npos) << text;
  EXPECT_NE(text.find("decay_milestones: [3, 7]"), std::string::npos) << text;
  auto again = ParseExperimentYaml(text, "c.yaml");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *timm);
}

}  // namespace
}  // namespace nmsparse
