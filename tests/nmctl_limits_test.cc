// The real nmctl binary against inputs past its limits (docs/reliability.md, "Limits"): the 10^7-run grid of
// issue 13 is refused by validate and submit from its run count, in well under a second and a few MB, before
// anything is sent; an oversized spec file is refused from its size. Each nmctl runs as a child process whose
// peak memory comes from wait4's rusage.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

constexpr char kHugeGrid[] = "tests/testdata/huge_grid_sweep.yaml";

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir ? dir : "/tmp";
}

struct Outcome {
  int exit_code = -1;
  std::string err;
  double seconds = 0;
  long max_rss_kb = 0;
};

// Runs cli/nmctl with `args` (from the runfiles root), stderr to a file; no coordinator listens at the
// address it is given, so a command that tried to send would fail with "cannot reach" instead.
Outcome RunNmctl(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  const std::string err_path = TempDir() + "/nmctl.err";
  std::vector<std::string> argv = {"cli/nmctl", "--coordinator", "127.0.0.1:1"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> cargv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  Outcome out;
  int status = 0;
  struct rusage usage {};
  EXPECT_EQ(wait4(pid, &status, 0, &usage), pid);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.max_rss_kb = usage.ru_maxrss;  // Kilobytes on Linux.
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  std::ostringstream text;
  text << in.rdbuf();
  out.err = text.str();
  return out;
}

TEST(NmctlLimitsTest, TenMillionRunGridIsRefusedFastAndSmallByValidateAndSubmit) {
  for (const char* command : {"validate", "submit"}) {
    const Outcome out = RunNmctl({command, kHugeGrid});
    EXPECT_EQ(out.exit_code, 2) << command << ": " << out.err;
    EXPECT_EQ(out.err,
              std::string("nmctl: ") + kHugeGrid +
                  ": the sweep expands to 10,000,000 runs, more than the limit of 100,000 (nmctl "
                  "--max-runs-per-sweep or NMSPARSE_MAX_RUNS_PER_SWEEP; the coordinator has its own, "
                  "nmserver --max_runs_per_sweep)\n");
    // Issue 13's bounds: under a second (it takes milliseconds) and under 200 MB resident.
    EXPECT_LT(out.seconds, 1.0) << command;
    EXPECT_LT(out.max_rss_kb, 200 * 1024) << command;
    std::printf("nmctl %s on the 10^7 grid: refused in %.3f s, max RSS %ld kB\n", command, out.seconds,
                out.max_rss_kb);
  }
}

TEST(NmctlLimitsTest, TheLimitFollowsTheFlagThenTheEnvironment) {
  const std::string sweep = "schemas/examples/quick_fmnist_sweep.yaml";  // 4 runs.
  Outcome out = RunNmctl({"validate", sweep, "--max-runs-per-sweep", "3"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.err.find("the sweep expands to 4 runs, more than the limit of 3"), std::string::npos)
      << out.err;
  out = RunNmctl({"validate", sweep}, {"NMSPARSE_MAX_RUNS_PER_SWEEP=3"});
  EXPECT_NE(out.err.find("more than the limit of 3"), std::string::npos) << out.err;
  out = RunNmctl({"validate", sweep, "--max-runs-per-sweep", "4"}, {"NMSPARSE_MAX_RUNS_PER_SWEEP=3"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  out = RunNmctl({"validate", sweep}, {"NMSPARSE_MAX_RUNS_PER_SWEEP=many"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "nmctl: NMSPARSE_MAX_RUNS_PER_SWEEP must be a non-negative integer, got 'many'\n");
}

TEST(NmctlLimitsTest, ASpecFilePastTheSizeLimitIsRefusedBeforeParsing) {
  const std::string path = TempDir() + "/big_sweep.yaml";
  {
    std::ofstream out(path, std::ios::trunc);
    out << "name: big\n";
    out << std::string(2'000'000 - 10, '#');  // A YAML comment: would parse, if it were read.
  }
  for (const char* command : {"validate", "submit"}) {
    const Outcome out = RunNmctl({command, path});
    EXPECT_EQ(out.exit_code, 2) << out.err;
    EXPECT_EQ(out.err, "nmctl: " + path +
                           ": 2,000,000 bytes, more than the limit of 1,048,576 bytes for a spec file\n");
  }
}

}  // namespace
}  // namespace nmsparse
