// Issue 29's bounded CLI outputs and compare's pooling rule, with the real nmctl binary against the real
// coordinator (in-process, loopback, a SQLite file, the production expander):
//  - submit and validate print counts and the first and last runs; --verbose lists every run;
//  - runs --limit/--offset pages in sweep order;
//  - export --format tensorboard leaves out runs that never reported a metric point;
//  - compare and report refuse to average a grid axis they do not show unless told to (--pool AXIS); an axis
//    of seeds only is a repeat and pooled without asking.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "server/sweeps/schemas_expander.h"
#include "server/test_support.h"

namespace nmsparse {
namespace {

using server::testing::FakeWorker;
using server::testing::ReportEpoch;
using server::testing::TempDbPath;
using server::testing::TestServer;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir ? dir : "/tmp";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

// cli/nmctl (from the runfiles root) with stdout and stderr to files: stdout is not a terminal.
Outcome Nmctl(const std::string& coordinator, const std::vector<std::string>& args) {
  const std::string out_path = TempDir() + "/nmctl.out", err_path = TempDir() + "/nmctl.err";
  std::vector<std::string> argv = {"cli/nmctl", "--coordinator", coordinator};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDOUT_FILENO);
    dup2(open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDERR_FILENO);
    std::vector<char*> cargv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(out_path), ReadFile(err_path)};
}

// `axes`: the grid section's lines after "grid:".
std::string SweepFile(const std::string& name, const std::string& axes) {
  const std::string path = absl::StrCat(TempDir(), "/", name, ".yaml");
  std::ofstream(path) << "name: " << name << R"(
base:
  model: {name: vit_micro_patch4_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 1}
  resources: {gpus: 1}
grid:
)" << axes;
  return path;
}

// 4 learning rates x 10 seeds: 40 runs, index = 10 * lr + seed.
constexpr char kFortyRuns[] =
    "  optimizer.lr: [1.0e-4, 2.0e-4, 3.0e-4, 4.0e-4]\n  seed: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n";

// The "#" column (the second for submit, the first for validate) of the table's rows; "..." for the gap.
std::vector<std::string> IndexColumn(const std::string& out, int column) {
  std::vector<std::string> indices;
  bool in_table = false;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    std::vector<absl::string_view> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (cells.size() > static_cast<size_t>(column) && cells[column] == "#") {
      in_table = true;
      continue;
    }
    if (!in_table || cells.empty() || cells[0].front() == '(') {
      in_table = false;
      continue;
    }
    if (std::all_of(cells.begin(), cells.end(), [](absl::string_view c) {
          return c.find_first_not_of('-') == absl::string_view::npos;
        })) {
      continue;  // The rule under the header.
    }
    indices.push_back(cells[0] == "..." ? "..." : std::string(cells[column]));
  }
  return indices;
}

class NmctlBoundedOutputTest : public ::testing::Test {
 protected:
  NmctlBoundedOutputTest() : server_(TempDbPath("bounded_output"), 10000, 5000, server::ExpandWithSchemas) {}
  Outcome Ctl(const std::vector<std::string>& args) { return Nmctl(server_.server().address(), args); }

  TestServer server_;
};

const std::vector<std::string> kSummaryIndices = {"0",  "1",  "2",  "3",  "4", "...",
                                                  "35", "36", "37", "38", "39"};

TEST_F(NmctlBoundedOutputTest, SubmitAndValidatePrintASummaryUnlessVerbose) {
  const std::string file = SweepFile("forty", kFortyRuns);
  const Outcome validate = Ctl({"validate", file});
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_NE(validate.out.find("40 run(s)"), std::string::npos) << validate.out;
  EXPECT_EQ(IndexColumn(validate.out, 0), kSummaryIndices) << validate.out;
  EXPECT_NE(validate.out.find("(30 more run(s) not shown: --verbose lists them all)"), std::string::npos);
  EXPECT_NE(validate.out.find("layer plan of run(s) 0-39:"), std::string::npos) << validate.out;
  EXPECT_EQ(IndexColumn(Ctl({"validate", file, "--verbose"}).out, 0).size(), 40u);

  const Outcome submit = Ctl({"submit", file});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("40 run(s) submitted"), std::string::npos) << submit.out;
  EXPECT_NE(submit.out.find("runs by state: QUEUED 40"), std::string::npos) << submit.out;
  EXPECT_EQ(IndexColumn(submit.out, 1), kSummaryIndices) << submit.out;
  EXPECT_NE(submit.out.find("(30 more run(s) not shown"), std::string::npos) << submit.out;
  const Outcome verbose = Ctl({"submit", file, "-v", "--dry-run"});
  ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
  EXPECT_EQ(IndexColumn(verbose.out, 1).size(), 40u) << verbose.out;
  EXPECT_EQ(verbose.out.find("not shown"), std::string::npos) << verbose.out;
}

TEST_F(NmctlBoundedOutputTest, RunsPagesWithLimitAndOffset) {
  ASSERT_EQ(Ctl({"submit", SweepFile("paged", kFortyRuns)}).exit_code, 0);
  const Outcome all = Ctl({"runs", "--sweep", "1"});  // Not a terminal: every run.
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(IndexColumn(all.out, 3).size(), 40u) << all.out;
  const Outcome page = Ctl({"runs", "--sweep", "1", "--limit", "5", "--offset", "10"});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_EQ(IndexColumn(page.out, 3), (std::vector<std::string>{"10", "11", "12", "13", "14"})) << page.out;
  EXPECT_NE(page.err.find("--offset 15 for the next"), std::string::npos) << page.err;
  const Outcome last = Ctl({"runs", "--sweep", "1", "--limit", "5", "--offset", "38"});
  EXPECT_EQ(IndexColumn(last.out, 3), (std::vector<std::string>{"38", "39"})) << last.out;
  EXPECT_EQ(last.err, "");
  const Outcome bad = Ctl({"runs", "--limit", "-1"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--limit: '-1' is not a count"), std::string::npos) << bad.err;
}

TEST_F(NmctlBoundedOutputTest, TensorBoardExportSkipsRunsThatNeverReported) {
  ASSERT_EQ(Ctl({"submit", SweepFile("tb", "  seed: [0, 1, 2]\n")}).exit_code, 0);
  FakeWorker worker(&server_.gateway(), 1);
  const std::vector<v1::Assignment> got = worker.WaitAssignments(1);
  ASSERT_EQ(got.size(), 1u);
  v1::RunAttempt ra;
  ra.set_run_id(got[0].run_id());
  ra.set_attempt(got[0].attempt());
  ASSERT_TRUE(ReportEpoch(server_.gateway(), ra, 0, {{"loss", 1.5}}).ok());
  ASSERT_EQ(Ctl({"cancel", "--sweep", "1"}).exit_code, 0);  // The two others never start.
  const std::string dir = TempDir() + "/tb";
  const Outcome tb = Ctl({"export", "1", "--format", "tensorboard", "-o", dir});
  ASSERT_EQ(tb.exit_code, 0) << tb.err;
  EXPECT_NE(tb.err.find("wrote TensorBoard events of 1 runs"), std::string::npos) << tb.err;
  int dirs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) dirs += entry.is_directory();
  EXPECT_EQ(dirs, 1);
}

TEST_F(NmctlBoundedOutputTest, CompareRefusesToPoolAnAxisItDoesNotShowUnlessAsked) {
  ASSERT_EQ(Ctl({"submit", SweepFile("three_axes",
                                     "  optimizer.lr: [1.0e-4, 2.0e-4]\n"
                                     "  schedule.epochs: [1, 2]\n"
                                     "  optimizer.weight_decay: [0.0, 0.05]\n")})
                .exit_code,
            0);
  const Outcome refused = Ctl({"compare", "1"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.err.find("grid axes past the second that the table does not show: "
                             "optimizer.weight_decay; each cell would average their runs as repeats. Pass "
                             "--pool optimizer.weight_decay"),
            std::string::npos)
      << refused.err;
  const Outcome pooled = Ctl({"compare", "1", "--pool", "optimizer.weight_decay"});
  EXPECT_EQ(pooled.exit_code, 0) << pooled.err;
  EXPECT_NE(pooled.out.find("by optimizer.lr x schedule.epochs, pooled over optimizer.weight_decay"),
            std::string::npos)
      << pooled.out;
  // The report's table is compare's: the same rule, and it says what it pooled.
  const std::string report_dir = TempDir() + "/report";
  const Outcome report_refused = Ctl({"report", "1", "-o", report_dir});
  EXPECT_EQ(report_refused.exit_code, 2) << report_refused.out;
  EXPECT_NE(report_refused.err.find("Pass --pool optimizer.weight_decay"), std::string::npos)
      << report_refused.err;
  EXPECT_FALSE(std::filesystem::exists(report_dir + "/index.html"));
  const Outcome report_pooled = Ctl({"report", "1", "-o", report_dir, "--pool", "optimizer.weight_decay"});
  EXPECT_EQ(report_pooled.exit_code, 0) << report_pooled.err;
  EXPECT_NE(report_pooled.out.find("pooled over optimizer.weight_decay"), std::string::npos)
      << report_pooled.out;
  EXPECT_TRUE(std::filesystem::exists(report_dir + "/index.html"));
  const Outcome wrong = Ctl({"compare", "1", "--pool", "optimizer.lr"});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("--pool optimizer.lr: not a grid axis that sweep 1's table leaves out"),
            std::string::npos)
      << wrong.err;

  // Seeds are repeats: their mean is what the table is for.
  ASSERT_EQ(Ctl({"submit", SweepFile("seeds",
                                     "  optimizer.lr: [1.0e-4, 2.0e-4]\n"
                                     "  schedule.epochs: [1, 2]\n  seed: [0, 1]\n")})
                .exit_code,
            0);
  const Outcome seeds = Ctl({"compare", "2"});
  EXPECT_EQ(seeds.exit_code, 0) << seeds.err;
}

}  // namespace
}  // namespace nmsparse
