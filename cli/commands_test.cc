// nmctl's command dispatch: usage errors, exit codes, offline validate, and the unreachable-coordinator
// message.
#include "cli/commands.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cli/nmctl_exit_codes.h"
#include "common/version.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace nmsparse::cli {
namespace {

struct Result {
  int code;
  std::string out, err;
};

Result Nmctl(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunNmctl(args, out, err);
  return {code, out.str(), err.str()};
}

std::string TempFile(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

constexpr char kSweep[] = R"(name: tiny
base:
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 8}
  schedule: {epochs: 2}
  sparsity: {sparsity_loc: FF}
grid:
  recipe:
    dense: {sparsity.sparsity_type: DENSE}
    srste: {sparsity.sparsity_type: SRSTE, sparsity.n_sparsity: 1, sparsity.m_sparsity: 4}
)";

TEST(CommandsTest, HelpAndUsageErrors) {
  EXPECT_EQ(Nmctl({"help"}).code, kExitOk);
  EXPECT_NE(Nmctl({"help"}).out.find("compare SWEEP"), std::string::npos);
  EXPECT_EQ(Nmctl({}).code, kExitUsage);
  const Result unknown = Nmctl({"frobnicate"});
  EXPECT_EQ(unknown.code, kExitUsage);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos);
  const Result wrong_option = Nmctl({"sweeps", "--metric", "top1"});
  EXPECT_EQ(wrong_option.code, kExitUsage);
  EXPECT_NE(wrong_option.err.find("'sweeps' takes no option --metric"), std::string::npos);
  EXPECT_EQ(Nmctl({"run", "abc"}).code, kExitUsage);
  EXPECT_EQ(Nmctl({"cancel"}).code, kExitUsage);
  EXPECT_EQ(Nmctl({"cancel", "3", "--sweep", "1"}).code, kExitUsage);
  EXPECT_EQ(Nmctl({"runs", "--state", "sleeping"}).code, kExitUsage);
}

// Issue 27: `runs --state` help and errors listed every state but stopped_early; both come from the proto
// enum.
TEST(CommandsTest, StateHelpAndErrorListEveryState) {
  const Result sleeping = Nmctl({"runs", "--state", "sleeping"});
  EXPECT_NE(sleeping.err.find(
                "--state: unknown run state 'sleeping' (one of queued, assigned, running, succeeded, failed, "
                "cancelled, stopped_early)"),
            std::string::npos)
      << sleeping.err;
  const Result help = Nmctl({"runs", "--help"});
  EXPECT_NE(help.out.find("one of queued, assigned, running, succeeded, failed, cancelled, stopped_early"),
            std::string::npos)
      << help.out;
}

// Issue 27: `best` by a metric without a declared direction needs --maximize or --minimize, refused before
// dialing; a declared one (loss) needs neither.
TEST(CommandsTest, BestNeedsADirectionForAnUndeclaredMetric) {
  const Result acc = Nmctl({"best", "1", "--metric", "acc", "--coordinator", "127.0.0.1:1"});
  EXPECT_EQ(acc.code, kExitUsage);
  EXPECT_NE(acc.err.find("--metric: metric 'acc' has no declared direction"), std::string::npos) << acc.err;
  EXPECT_NE(acc.err.find("pass --maximize or --minimize"), std::string::npos) << acc.err;
  const Result both = Nmctl({"best", "1", "--minimize", "--maximize", "--coordinator", "127.0.0.1:1"});
  EXPECT_EQ(both.code, kExitUsage);
  EXPECT_NE(both.err.find("give one of them, not both"), std::string::npos) << both.err;
  // Past the direction check: the unreachable coordinator is what fails.
  const Result loss = Nmctl({"best", "1", "--metric", "loss", "--coordinator", "127.0.0.1:1"});
  EXPECT_NE(loss.code, kExitUsage) << loss.err;
  EXPECT_EQ(loss.err.find("declared direction"), std::string::npos) << loss.err;
}

// Usage errors of resume and fork are caught before any call to the coordinator.
TEST(CommandsTest, ResumeAndForkUsage) {
  const Result no_run = Nmctl({"fork", "--set", "schedule.epochs=6"});
  EXPECT_EQ(no_run.code, kExitUsage);
  EXPECT_NE(no_run.err.find("'fork' takes one run id"), std::string::npos) << no_run.err;
  const Result resume_set = Nmctl({"resume", "3", "--set", "schedule.epochs=6"});
  EXPECT_EQ(resume_set.code, kExitUsage);
  EXPECT_NE(resume_set.err.find("'resume' takes no option --set"), std::string::npos) << resume_set.err;
  EXPECT_EQ(Nmctl({"resume", "x"}).code, kExitUsage);
  const Result priority = Nmctl({"fork", "3", "--priority", "high"});
  EXPECT_EQ(priority.code, kExitUsage);
  EXPECT_NE(priority.err.find("--priority: 'high' is not an integer"), std::string::npos) << priority.err;
  const Result help = Nmctl({"fork", "--help"});
  EXPECT_EQ(help.code, kExitOk);
  EXPECT_NE(help.out.find("--set key=value"), std::string::npos) << help.out;
}

// issue 14: `<cmd> --help` printed the global help; there was no --version.
TEST(CommandsTest, PerCommandHelpAndVersion) {
  const Result submit = Nmctl({"submit", "--help"});
  EXPECT_EQ(submit.code, kExitOk);
  EXPECT_EQ(submit.out.rfind("usage: nmctl submit FILE", 0), 0u) << submit.out;
  EXPECT_NE(submit.out.find("--idempotency-key K"), std::string::npos) << submit.out;
  EXPECT_NE(submit.out.find("--coordinator HOST:PORT"), std::string::npos) << submit.out;
  EXPECT_EQ(submit.out.find("compare SWEEP"), std::string::npos) << "not the global help";
  EXPECT_EQ(Nmctl({"help", "submit"}).out, submit.out);
  const Result best = Nmctl({"best", "-h"});
  EXPECT_EQ(best.code, kExitOk);
  EXPECT_NE(best.out.find("-k N"), std::string::npos) << best.out;
  EXPECT_EQ(Nmctl({"help", "frobnicate"}).code, kExitUsage);
  EXPECT_EQ(Nmctl({"--help"}).code, kExitOk);
  const Result version = Nmctl({"--version"});
  EXPECT_EQ(version.code, kExitOk);
  EXPECT_EQ(version.out, VersionText("nmctl"));
}

// Issue 27: validate names MDGF runs by their recipe (not STRUCTURED_NM), puts labels in the one order of
// `runs` (sorted by axis), and prints an ASHA sweep's rungs with the runs each keeps.
TEST(CommandsTest, ValidateShowsRecipesSortedLabelsAndAshaRungs) {
  const std::string path = TempFile("asha_sweep.yaml", R"(name: asha
base:
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 8}
  schedule: {epochs: 4}
  sparsity: {recipe: MDGF, n_sparsity: 1, m_sparsity: 8, sparsity_loc: FF}
grid:
  recipe:
    mdgf: {sparsity.recipe: MDGF}
    srste: {sparsity.recipe: SRSTE}
  nm:
    a: {optimizer.lr: 0.001}
    b: {optimizer.lr: 0.002}
    c: {optimizer.lr: 0.003}
    d: {optimizer.lr: 0.004}
early_stopping: {metric: top1, reduction_factor: 2}
)");
  const Result r = Nmctl({"validate", path});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("MDGF 1:8"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("STRUCTURED_NM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recipe=mdgf nm=a"), std::string::npos) << r.out;  // Axis order (issue 40).
  EXPECT_NE(
      r.out.find("early_stopping asha on top1 (max): rung 1 after epoch 1: about 4 of 8 runs go on; rung 2 "
                 "after epoch 2: about 2 of 4 runs go on; a rung decides once 2 runs have reached it "
                 "(min_peers), the first ones going on meanwhile\n"),
      std::string::npos)
      << r.out;
}

TEST(CommandsTest, ValidatePrintsRunsAndLayerPlansOffline) {
  const std::string path = TempFile("tiny_sweep.yaml", kSweep);
  const Result r = Nmctl({"validate", path, "--coordinator", "127.0.0.1:1"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("2 run(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recipe=srste"), std::string::npos);
  EXPECT_NE(r.out.find("SRSTE 1:4"), std::string::npos);
  EXPECT_EQ(r.out.find("early_stopping"), std::string::npos);  // No ASHA block, no rungs.
  // Identical layers are one line with a count (issue 40, item 4): the nano ViT's 2 blocks.
  EXPECT_NE(r.out.find("blocks.{0-1}.mlp.fc1.weight (2 layers)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("blocks.0.mlp.fc1.weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PRECISION"), std::string::npos);
  // The inputs the runs will use: synthetic images as stored, normalised by 0.5 / 0.5.
  EXPECT_NE(r.out.find("image transforms of run(s) 0-1:\ntrain (images as stored):\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  Normalize(mean=(0.5), std=(0.5))\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("RandomResizedCrop"), std::string::npos) << r.out;
  const Result bf16 = Nmctl({"validate", path, "--set", "resources.precision=bf16"});
  ASSERT_EQ(bf16.code, kExitOk) << bf16.err;
  EXPECT_NE(bf16.out.find(" bf16 "), std::string::npos) << bf16.out;
  EXPECT_EQ(r.out.find(" bf16 "), std::string::npos);
  const Result json = Nmctl({"validate", path, "--json", "--set", "schedule.epochs=5"});
  ASSERT_EQ(json.code, kExitOk) << json.err;
  EXPECT_NE(json.out.find("\"content_hash\""), std::string::npos);
  EXPECT_NE(json.out.find("epochs: 5"), std::string::npos);
  EXPECT_NE(json.out.find("\"transforms\""), std::string::npos);
}

// Issue 40, item 4: validate shows what each run will do: the optimizer's lr as trained and the batch, the
// steps per epoch and in all (1,024 synthetic images / batch 8 = 128 per epoch, 2 epochs), the schedule, the
// phases (1-based epochs) and D at the last step; runs that do the same share one block.
TEST(CommandsTest, ValidateShowsWhatEachRunWillDo) {
  const std::string path = TempFile("tiny_sweep_training.yaml", kSweep);
  const Result r = Nmctl({"validate", path, "--set", "optimizer.lr=0.0025"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(
      r.out.find("training of run(s) 0:\n  optimizer adamw: lr 0.0025 (as trained: after a reference "
                 "config's lr_base scaling), weight_decay 0.05; batch 8 x 1 step(s) of accumulation over 1 "
                 "rank(s)\n  steps: 128 per epoch (1024 images), 256 in all (2 epoch(s))\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  phases: dense throughout\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("training of run(s) 1:\n"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("  phases: epochs 1-2 sparse (SR-STE 1:4)\n  D at the last step: 0 (a hard mask there)\n"),
      std::string::npos)
      << r.out;
  // MDGF decays D over the 256 steps of its sparse phase: D is shown at the last of them, the value the
  // deployable-model warning names.
  const std::string mdgf_path = TempFile("mdgf_sweep.yaml", R"(name: mdgf
base:
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 8}
  schedule: {epochs: 2}
  sparsity: {sparsity_loc: FF, n_sparsity: 1, m_sparsity: 8}
grid:
  recipe:
    mdgf: {sparsity.recipe: MDGF, sparsity.decay_coef: 0.0002}
)");
  const Result mdgf = Nmctl({"validate", mdgf_path});
  ASSERT_EQ(mdgf.code, kExitOk) << mdgf.err;
  EXPECT_NE(
      mdgf.out.find("  phases: epochs 1-2 sparse (1:8 MDGF-Exp)\n  D at the last step: 0.95 (decay_type EXP, "
                    "decay_coef 0.0002, step 256 of the sparse phase)\n"),
      std::string::npos)
      << mdgf.out;
  EXPECT_NE(mdgf.err.find("leaves D = 0.95 at the last of the 256 steps"), std::string::npos) << mdgf.err;
}

// A run over several nodes: validate shows its ranks as nodes x gpus and says that its workers must share
// their work directory; single-node runs say nothing of it.
TEST(CommandsTest, ValidateNamesMultiNodeRunsAndTheirSharedStorage) {
  const std::string path = TempFile("tiny_sweep_nodes.yaml", kSweep);
  const Result r = Nmctl({"validate", path, "--set", "resources.nodes=2"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find(" 2x1 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run(s) 0-1 span several nodes (resources.nodes x resources.gpus): they start only on "
                       "workers that declare the same shared storage for their work directory (nmworker "
                       "--storage NAME), one worker per node"),
            std::string::npos)
      << r.out;
  const Result one = Nmctl({"validate", path});
  EXPECT_EQ(one.out.find("span several nodes"), std::string::npos);
}

// The semi_structured section reaches nmctl through the wire form (v1.SemiStructuredSpec): validate lists the
// chosen 2:4 linears of every run, a sweep axis can change the section, and a pattern that matches no linear
// is refused naming the key and the pattern.
TEST(CommandsTest, ValidateListsSemiStructuredLayers) {
  const std::string sweep =
      "name: semi\nbase:\n  model: {name: vit_nano_patch7_28}\n"
      "  sparsity: {recipe: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FF}\n"
      "  semi_structured: {layers: [\"blocks.*.mlp.fc1\"], dense_after: {fraction: 0.7}}\n"
      "grid:\n  semi_structured.mask: [exact, transposable]\n";
  const Result r = Nmctl({"validate", TempFile("semi.yaml", sweep)});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("semi-structured 2:4 layers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mask exact"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mask transposable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blocks.0.mlp.fc1 weight_2:4"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("blocks.0.mlp.fc2 weight_2:4"), std::string::npos) << r.out;
  const Result bad = Nmctl(
      {"validate", TempFile("semi_bad.yaml", sweep), "--set", "semi_structured.layers=[\"blocks.*.nope\"]"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_NE(bad.err.find("semi_structured.layers[0]: pattern \"blocks.*.nope\" matches no linear layer"),
            std::string::npos)
      << bad.err;
}

TEST(CommandsTest, ValidateErrorsNameFileLineAndKey) {
  const std::string path = TempFile("bad_sweep.yaml",
                                    "name: bad\nbase:\n  model: {name: vit_nano_patch7_28}\n"
                                    "  sparsity: {sparsity_type: SRSTE, n_sparsity: 9, m_sparsity: 4}\n");
  const Result r = Nmctl({"validate", path});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("bad_sweep.yaml:4: sparsity.n_sparsity"), std::string::npos) << r.err;
  const Result set = Nmctl({"validate", TempFile("ok.yaml", kSweep), "--set", "schedule.nope=1"});
  EXPECT_EQ(set.code, kExitUsage);
  EXPECT_NE(set.err.find("--set schedule.nope=1"), std::string::npos) << set.err;
  EXPECT_EQ(Nmctl({"validate", "/nonexistent/sweep.yaml"}).code, kExitNotFound);
}

// One rule per key, from the spec key table, whichever way a value arrives (issue 14: epochs=-1 read
// "must be >= 0" through the proto's uint32 while epochs=0 read "must be >= 1").
// Issue 22: bytes that are not UTF-8 cannot travel in a proto3 string; nmctl says where they are instead of
// sending a request the coordinator cannot parse. Hostile text in the spec is shown escaped.
TEST(CommandsTest, SpecsAreUtf8AndShownSafely) {
  std::string text = kSweep;
  text.replace(text.find("tiny"), 4, "tiny \xff");
  const Result bad = Nmctl({"validate", TempFile("not_utf8.yaml", text)});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_NE(bad.err.find("not_utf8.yaml: byte 11 (line 1) is not UTF-8"), std::string::npos) << bad.err;
  const Result bad_set = Nmctl({"validate", TempFile("tiny.yaml", kSweep), "--set", "name=\xfe"});
  EXPECT_EQ(bad_set.code, kExitUsage);
  EXPECT_NE(bad_set.err.find("--set 'name=\uFFFD': byte 5 (line 1) is not UTF-8"), std::string::npos)
      << bad_set.err;

  std::string hostile = kSweep;
  hostile.replace(hostile.find("name: tiny"), 10, "name: \"a\\e[2J\\nb\\u202e\"");
  const Result shown = Nmctl({"validate", TempFile("hostile.yaml", hostile)});
  EXPECT_EQ(shown.code, kExitOk) << shown.err;
  EXPECT_NE(shown.out.find("sweep 'a\\x1b[2J\\x0ab\\u202e'"), std::string::npos) << shown.out;
}

TEST(CommandsTest, OutOfRangeValuesGetTheKeyTablesRule) {
  const std::string path = TempFile("range.yaml", kSweep);
  for (const std::string value : {"-1", "0"}) {
    const Result set = Nmctl({"validate", path, "--set", "schedule.epochs=" + value});
    EXPECT_EQ(set.code, kExitUsage);
    EXPECT_NE(set.err.find("schedule.epochs: value " + value + " is out of range: must be >= 1"),
              std::string::npos)
        << set.err;
    const std::string file = TempFile(
        "range_file.yaml", "name: r\nmodel: {name: vit_nano_patch7_28}\nschedule: {epochs: " + value + "}\n");
    const Result in_file = Nmctl({"validate", file});
    EXPECT_NE(in_file.err.find("schedule.epochs: value " + value + " is out of range: must be >= 1"),
              std::string::npos)
        << in_file.err;
  }
}

// Grids with one run that validation must refuse (issue 25: a memo keyed on a hand-kept list of what
// validation reads let run 1 reuse run 0's "valid"). validate and submit (which expands locally before it
// calls the coordinator) both refuse them, naming the file, the run and the key, in either order of the grid.
struct InvalidRunGrid {
  std::string base;            // The base's sections.
  std::string axis;            // The grid's key path.
  std::string valid, invalid;  // Its two values.
  std::string key;             // What the error names.
};

std::vector<InvalidRunGrid> InvalidRunGrids() {
  const std::string semi =
      "  model: {name: vit_nano_patch7_28}\n  data: {dataset: synthetic, batch_size: 32}\n"
      "  sparsity: {sparsity_type: SRSTE, sparsity_loc: FF, phases: [{sparse: 0.5}, {fine_tune: 0.5}]}\n"
      "  semi_structured: {layers: [\"blocks.*.mlp.fc1\"]}\n";
  return {
      {"  model: {name: vit_nano_patch7_28}\n  data: {dataset: synthetic, batch_size: 64, synthetic_size: "
       "256}\n",
       "optimizer.grad_accum_steps", "1", "8", "optimizer.grad_accum_steps 8"},
      {"  model: {name: vit_nano_patch7_28}\n  data: {dataset: synthetic, batch_size: 100}\n",
       "data.train_subset", "500", "50", "data.train_subset 50"},
      {"  model: {name: vit_nano_patch7_28}\n  data: {dataset: synthetic, batch_size: 32}\n",
       "data.synthetic_size", "256", "16", "data.synthetic_size 16"},
      {semi, "semi_structured.dense_after", "{fraction: 0.5}", "{phase: 2}",
       "semi_structured.dense_after.phase"},
      {semi, "semi_structured.layers", "[\"blocks.*.mlp.fc1\"]", "[\"blocks.*.nope\"]",
       "semi_structured.layers[0]"},
  };
}

TEST(CommandsTest, EveryRunOfAGridIsValidatedWhateverItsOrder) {
  for (const InvalidRunGrid& g : InvalidRunGrids()) {
    for (const bool invalid_first : {false, true}) {
      const std::string first = invalid_first ? g.invalid : g.valid;
      const std::string second = invalid_first ? g.valid : g.invalid;
      const std::string path = TempFile("grid.yaml", "name: grid\nbase:\n" + g.base + "grid:\n  " + g.axis +
                                                         ": [" + first + ", " + second + "]\n");
      const std::string run = absl::StrCat("run ", invalid_first ? 0 : 1, " (", g.axis, "=");
      for (const char* command : {"validate", "submit"}) {
        const Result r = Nmctl({command, path, "--coordinator", "127.0.0.1:1"});
        EXPECT_EQ(r.code, kExitUsage) << command << " " << g.axis << "\n" << r.out << r.err;
        EXPECT_NE(r.err.find(path + ": " + run), std::string::npos) << command << "\n" << r.err;
        EXPECT_NE(r.err.find(g.key), std::string::npos) << command << "\n" << r.err;
      }
    }
  }
}

TEST(CommandsTest, UnreachableCoordinatorIsNamed) {
  const Result r = Nmctl({"sweeps", "--coordinator", "127.0.0.1:1"});
  EXPECT_EQ(r.code, kExitServerError);
  EXPECT_NE(r.err.find("cannot reach the coordinator at 127.0.0.1:1"), std::string::npos) << r.err;
  // A host without a port means the default port, not gRPC's 443.
  const Result bare = Nmctl({"sweeps", "--coordinator", "127.0.0.2"});
  EXPECT_EQ(bare.code, kExitServerError);
  EXPECT_NE(bare.err.find("cannot reach the coordinator at 127.0.0.2:50151"), std::string::npos) << bare.err;
}

// Issue 40, item 5: an ASHA sweep's runs are dispatched in a seeded shuffle keyed by their content, which
// validate prints; the same grid written with its learning rates descending runs the same runs in the same
// order.
TEST(CommandsTest, ValidateShowsAnAshaSweepsDispatchOrderWhateverTheAxisOrder) {
  auto lrs_in_dispatch_order = [](const std::string& name, const std::string& lrs) {
    const std::string path =
        TempFile(name, absl::StrCat(R"(name: order
seed: 3
base:
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 8}
  schedule: {epochs: 4}
grid:
  optimizer.lr: )",
                                    lrs, "\nearly_stopping: {metric: top1, reduction_factor: 2}\n"));
    const Result text = Nmctl({"validate", path});
    EXPECT_EQ(text.code, kExitOk) << text.err;
    EXPECT_NE(text.out.find("dispatch order (seed 3, shuffled by content so that the axes' order does not "
                            "matter): "),
              std::string::npos)
        << text.out;
    const Result json = Nmctl({"validate", path, "--json"});
    EXPECT_EQ(json.code, kExitOk) << json.err;
    const nlohmann::json doc = nlohmann::json::parse(json.out);
    std::vector<std::string> out;
    for (const auto& i : doc.at("dispatch_order")) {
      out.push_back(doc.at("runs").at(i.get<size_t>()).at("labels").at("optimizer.lr").get<std::string>());
    }
    return out;
  };
  const std::vector<std::string> up =
      lrs_in_dispatch_order("up.yaml", "[0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03]");
  const std::vector<std::string> down =
      lrs_in_dispatch_order("down.yaml", "[0.03, 0.01, 0.003, 0.001, 0.0003, 0.0001]");
  EXPECT_EQ(up.size(), 6u);
  EXPECT_EQ(up, down);
  EXPECT_NE(up, (std::vector<std::string>{"0.0001", "0.0003", "0.001", "0.003", "0.01", "0.03"}));
}

// Issue 40, item 4: a misspelt key or model gets "did you mean" and the line it is on.
TEST(CommandsTest, ValidateSuggestsTheKeyOrModelMeant) {
  const Result key = Nmctl({"validate", TempFile("typo_key.yaml", R"(name: typo
base:
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 8}
  schedule: {epochs: 2, warmup_epoch: 1}
)")});
  EXPECT_EQ(key.code, kExitUsage);
  EXPECT_NE(
      key.err.find("typo_key.yaml:5: schedule.warmup_epoch: unknown key (did you mean 'warmup_epochs'?)"),
      std::string::npos)
      << key.err;
  const Result model = Nmctl({"validate", TempFile("typo_model.yaml", R"(name: typo
base:
  model: {name: vit_nano_patch7_29}
  data: {dataset: synthetic, batch_size: 8}
)")});
  EXPECT_EQ(model.code, kExitUsage);
  EXPECT_NE(model.err.find("typo_model.yaml:3: model.name: unknown model 'vit_nano_patch7_29' (did you mean "
                           "'vit_nano_patch7_28'?)"),
            std::string::npos)
      << model.err;
  const Result flat = Nmctl({"validate", TempFile("typo_flat.yaml",
                                                  "model: vit_nano_patch7_28\ndataset: synthetic\n"
                                                  "batch_size: 8\nlog_wand: true\n")});
  EXPECT_EQ(flat.code, kExitUsage);
  EXPECT_NE(flat.err.find("typo_flat.yaml:4: log_wand: unknown key (did you mean 'log_wandb'?)"),
            std::string::npos)
      << flat.err;
}

// Issue 40, item 4: timm's deit_tiny_patch16_224 is vit_tiny_patch16_224's architecture: accepted, and the
// same run (one content hash) as the catalogue's name.
TEST(CommandsTest, ValidateReadsTimmAliasesAsTheCatalogueModel) {
  auto hash = [](const std::string& name, const std::string& model) {
    const Result r =
        Nmctl({"validate", "--json",
               TempFile(name, absl::StrCat("name: alias\nbase:\n  model: {name: ", model,
                                           "}\n  data: {dataset: synthetic, batch_size: 8}\n"))});
    EXPECT_EQ(r.code, kExitOk) << r.err;
    if (r.code != kExitOk) return std::string();
    return nlohmann::json::parse(r.out).at("runs").at(0).at("content_hash").get<std::string>();
  };
  const std::string deit = hash("deit.yaml", "deit_tiny_patch16_224");
  EXPECT_FALSE(deit.empty());
  EXPECT_EQ(deit, hash("vit.yaml", "vit_tiny_patch16_224"));
}

// Issue 40, item 4: a reference config's keys that nmsparse accepts and ignores are named, with their line
// and why they change nothing trained.
TEST(CommandsTest, ValidateNamesTheReferenceKeysItIgnores) {
  const Result r =
      Nmctl({"validate", TempFile("flat.yaml",
                                  "model: vit_nano_patch7_28\ndataset: synthetic\nbatch_size: 8\n"
                                  "log_wandb: true\nchannels_last: true\n")});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("flat.yaml:4: log_wandb: true is ignored (logging only): it does not change "
                       "what is trained"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("flat.yaml:5: channels_last: true is ignored (memory layout only)"), std::string::npos)
      << r.err;
}

// Issue 40, item 4: a TPE search is announced with its budget, not as the one draw validate checks.
TEST(CommandsTest, ValidateAnnouncesASearchWithItsBudget) {
  const Result r = Nmctl({"validate", TempFile("tpe.yaml", R"(name: tpe
base:
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 8}
random:
  optimizer.lr: {min: 1.0e-4, max: 1.0e-2, log: true}
search: {algorithm: tpe, budget: 8, metric: top1}
)")});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("sweep 'tpe', a search of budget 8 run(s)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(", 1 run(s)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nmsparse::cli
