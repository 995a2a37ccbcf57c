// nmctl run's per-epoch diagnostics of the sparse layers and its cost line (docs/sparsity-method.md §10-§11).
#include "cli/run_format.h"

#include "contract/metric_line.h"
#include "contract/metric_names.h"
#include "gtest/gtest.h"

namespace nmsparse::cli {
namespace {

v1::MetricPoint EpochPoint(int epoch, double flip_rate, double pruned, double kept) {
  v1::MetricPoint p;
  p.set_kind(contract::kKindEpoch);
  p.set_epoch(epoch);
  (*p.mutable_labels())[contract::kNmStageLabel] = "2:8";
  (*p.mutable_values())[contract::kDecayValue] = 0.5;
  if (flip_rate >= 0) (*p.mutable_values())[contract::kFlipRate] = flip_rate;
  (*p.mutable_values())[contract::kGradNormPruned] = pruned;
  (*p.mutable_values())[contract::kGradNormKept] = kept;
  return p;
}

TEST(RunFormatTest, DiagnosticsTableHasOneRowPerEpochLine) {
  v1::MetricPoint step = EpochPoint(0, 0.2, 1, 1);
  step.set_kind(contract::kKindStep);  // Step lines stay in the metric curve only.
  v1::MetricPoint dense;
  dense.set_kind(contract::kKindEpoch);  // A dense run's epoch line: no row.
  const Table table =
      SparsityDiagnosticsTable({EpochPoint(0, -1, 0.5, 2), step, EpochPoint(1, 0.125, 1, 4), dense});
  ASSERT_EQ(table.rows(), 2u);
  const std::string text = table.Render();
  EXPECT_NE(text.find("FLIP RATE"), std::string::npos) << text;
  EXPECT_NE(text.find("0.125"), std::string::npos) << text;
  EXPECT_NE(text.find("0.25"), std::string::npos) << text << "pruned / kept of the first two epochs";
  EXPECT_NE(text.find("\n    1  2:8"), std::string::npos) << text;  // Epochs numbered from 1.
  EXPECT_NE(text.find("\n    2  2:8"), std::string::npos) << text;
  EXPECT_NE(text.find("2:8"), std::string::npos) << text;
}

TEST(RunFormatTest, CostSummaryReadsTrainingAndInferenceFlopsAndParameters) {
  google::protobuf::Map<std::string, double> final_metrics;
  EXPECT_EQ(CostSummary(final_metrics), "");
  final_metrics[contract::kFlops] = 1.5e12;
  final_metrics[contract::kInferenceFlops] = 2.25e9;
  final_metrics[contract::kParams] = 27978;
  EXPECT_EQ(CostSummary(final_metrics),
            "training 1.5e+12 FLOPs, inference 2.25e+09 FLOPs/image, 27978 parameters");
}

}  // namespace
}  // namespace nmsparse::cli

namespace nmsparse::cli {
namespace {

// Issue 40: epochs for people are numbered from 1 everywhere (watch and the figures did, run did not).
TEST(RunFormatTest, EpochsAreNumberedFromOne) {
  v1::MetricPoint p;
  p.set_kind(contract::kKindEpoch);
  EXPECT_EQ(EpochText(p), "1");
  p.set_kind(contract::kKindStep);
  p.set_epoch(2);
  EXPECT_EQ(EpochText(p), "3");
  v1::MetricPoint final_line;
  final_line.set_kind(contract::kKindFinal);
  EXPECT_EQ(EpochText(final_line), "-");
}

// Issue 40: labels in axis order (the stored run's label_axes), random draws in nmctl's number format.
TEST(RunFormatTest, LabelsInAxisOrderWithShortNumbers) {
  v1::Run run;
  (*run.mutable_labels())["recipe"] = "srste";
  (*run.mutable_labels())["nm"] = "1:8";
  (*run.mutable_labels())["optimizer.lr"] = "0.0002487869161216888";
  (*run.mutable_labels())["seed"] = "12";
  EXPECT_EQ(FormatLabels(run), "nm=1:8 optimizer.lr=0.0002488 recipe=srste seed=12");  // No axis order known.
  for (const char* axis : {"recipe", "nm", "seed", "optimizer.lr"}) run.add_label_axes(axis);
  EXPECT_EQ(FormatLabels(run), "recipe=srste nm=1:8 seed=12 optimizer.lr=0.0002488");
  EXPECT_EQ(FormatLabels({{"b", "1e-3"}, {"a", "x"}}), "b=0.001 a=x");  // Validate's runs: axis order.
}

// nmctl run says where the run's model is and how to export it (issue 39): its own checkpoint on its worker,
// the reused run's for a run that reused results, the command once the run has ended, nothing before it ran.
TEST(RunFormatTest, ModelLocationNamesTheCheckpointAndTheExportCommand) {
  v1::Run run;
  run.set_id(42);
  run.set_state(v1::QUEUED);
  EXPECT_EQ(ModelLocationText(run), "");
  run.set_worker_id(3);
  run.set_state(v1::RUNNING);
  EXPECT_EQ(ModelLocationText(run),
            "  model:    <work_dir>/runs/42/checkpoint.pt on worker 3 (its --work_dir)\n"
            "  export:   once the run has ended: nmctl export-model 42 -o DIR\n");
  run.set_state(v1::SUCCEEDED);
  EXPECT_EQ(ModelLocationText(run),
            "  model:    <work_dir>/runs/42/checkpoint.pt on worker 3 (its --work_dir)\n"
            "  export:   nmctl export-model 42 -o DIR\n");
  run.set_worker_id(0);
  run.set_reused_from(17);
  EXPECT_EQ(
      ModelLocationText(run),
      "  model:    <work_dir>/runs/17/checkpoint.pt, run 17's, whose results this run reused, on the worker "
      "that ran it\n"
      "  export:   nmctl export-model 42 -o DIR\n");
}

}  // namespace
}  // namespace nmsparse::cli
