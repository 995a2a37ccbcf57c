// Issue 22's search reproductions with the real coordinator (in-process, loopback, a SQLite file, the
// production expander) and the real nmctl binary. Both sweeps are stored through the store, as an older
// coordinator could have left them, since submission now refuses them:
//  - defect 2: n_candidates 4,000,000,000. Once its first run ended, the proposal held the store for minutes
//    inside CompleteRun, and again at every start-up before serving. Now CompleteRun, nmctl sweeps and a
//    restart answer promptly, and the proposal is settled (a run proposed, or the search ended with why).
//  - defect 3: a random axis whose every point breaks a constraint (warmup_epochs past epochs). The sweep
//    stopped silently, follow said it succeeded, and nmserver exited 1 at its next start. Now the coordinator
//    starts and serves, nmctl sweeps and follow and the dashboard's sweep page show why the search ended
//    (follow exits 4), and the sweep can be cancelled.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "schemas/sweep.h"
#include "server/dashboard/dashboard_server.h"
#include "server/store/clock.h"
#include "server/store/store.h"
#include "server/store/sweep_table.h"
#include "server/sweeps/schemas_expander.h"
#include "server/test_support.h"

namespace nmsparse {
namespace {

using server::testing::TempDbPath;
using server::testing::TestServer;

// Far above a loaded machine's slowest answer, far below a proposal ranking 4e9 candidates (minutes).
constexpr int kAnswerDeadlineS = 10;
constexpr absl::Duration kPatience = absl::Seconds(60);

constexpr char kSweep[] = R"(name: NAME
base:
  model: {name: vit_micro_patch4_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 10}
random:
  schedule.warmup_epochs: {min: 0, max: 5}
  optimizer.lr: {min: 1.0e-4, max: 1.0e-2, log: true}
search: {algorithm: tpe, budget: 4, seed: 1, metric: top1, parallel: 1, n_startup: 1}
)";

v1::SweepSpec Sweep(const std::string& name) {
  std::string text = kSweep;
  text.replace(text.find("NAME"), 4, name);
  auto s = ParseSweepYaml(text, "sweep.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : v1::SweepSpec();
}

int64_t StoreSweep(const std::string& db, const v1::SweepSpec& spec) {
  int64_t id = 0;
  auto store = server::Store::Open(db);
  EXPECT_TRUE(store.ok()) << store.status();
  absl::Status s = (*store)->Write([&](server::Database* d) -> absl::Status {
    absl::StatusOr<int64_t> inserted = server::InsertSweep(d, spec, server::NowMs(), {});
    if (inserted.ok()) id = *inserted;
    return inserted.status();
  });
  EXPECT_TRUE(s.ok()) << s;
  return id;
}

void SetDeadline(grpc::ClientContext* ctx) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(kAnswerDeadlineS));
}

v1::Sweep GetSweep(TestServer& server, int64_t id) {
  v1::GetSweepRequest get;
  get.set_sweep_id(id);
  v1::Sweep sweep;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  const grpc::Status s = server.coordinator().GetSweep(&ctx, get, &sweep);
  EXPECT_TRUE(s.ok()) << "GetSweep " << id << ": " << s.error_message();
  return sweep;
}

uint32_t RunCount(const v1::Sweep& sweep) {
  uint32_t n = 0;
  for (const auto& [state, count] : sweep.run_counts()) n += count;
  return n;
}

template <typename Condition>
bool Eventually(Condition done) {
  const absl::Time deadline = absl::Now() + kPatience;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return true;
}

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs cli/nmctl against `address`; killed (exit_code -1) past kPatience.
Outcome RunNmctl(const std::string& address, const std::vector<std::string>& args) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string base = std::string(dir ? dir : "/tmp") + "/nmctl";
  std::vector<std::string> argv = {"cli/nmctl", "--coordinator", address};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(open((base + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDOUT_FILENO);
    dup2(open((base + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDERR_FILENO);
    std::vector<char*> cargv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  Outcome out;
  int status = 0;
  const bool ended = Eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; });
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  out.exit_code = ended && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  out.out = ReadFile(base + ".out");
  out.err = ReadFile(base + ".err");
  return out;
}

TEST(SearchRecoveryTest, HugeCandidatesAndFailingProposalsNeitherFreezeNorStopTheCoordinator) {
  const std::string db = TempDbPath("search_recovery");
  TestServer server(db, 10000, 5000, server::ExpandWithSchemas);
  server.Stop();
  v1::SweepSpec huge = Sweep("huge-candidates");
  huge.mutable_search()->set_n_candidates(4'000'000'000u);
  const int64_t huge_id = StoreSweep(db, huge);
  v1::SweepSpec invalid = Sweep("warmup-past-epochs");
  invalid.mutable_random(0)->set_min(11);  // Every point: warmup_epochs in [11, 15] > epochs 10.
  invalid.mutable_random(0)->set_max(15);
  invalid.mutable_search()->set_budget(20);
  const int64_t invalid_id = StoreSweep(db, invalid);
  server.Restart();  // Before the fix: exits 1 (the failing proposal) at start-up.

  // Defect 3: the search ends with its reason, and the coordinator serves.
  ASSERT_TRUE(Eventually([&] { return !GetSweep(server, invalid_id).search_ended().empty(); }));
  const std::string reason = GetSweep(server, invalid_id).search_ended();
  EXPECT_NE(reason.find("proposal 0: none of 8 points drawn is a valid run; the first: "), std::string::npos)
      << reason;
  EXPECT_NE(reason.find("schedule.warmup_epochs: value 1"), std::string::npos) << reason;
  EXPECT_NE(reason.find("must be <= schedule.epochs (10)"), std::string::npos) << reason;

  // Defect 2: a stored n_candidates of 4e9 (past the bound that an older coordinator did not check) never
  // reaches the sampler: its search ends at proposal 0, naming the key, while the coordinator answers (the
  // sampler's own cap on candidates is tpe_sampler_test's).
  ASSERT_TRUE(Eventually([&] { return !GetSweep(server, huge_id).search_ended().empty(); }));
  EXPECT_EQ(RunCount(GetSweep(server, huge_id)), 0u);
  EXPECT_NE(GetSweep(server, huge_id).search_ended().find("search.n_candidates: value 4000000000"),
            std::string::npos)
      << GetSweep(server, huge_id).search_ended();
  server.Restart();  // Before the fix: ranks 4e9 candidates before serving.
  GetSweep(server, huge_id);

  const std::string address = server.server().address();
  const Outcome sweeps = RunNmctl(address, {"sweeps"});
  EXPECT_EQ(sweeps.exit_code, 0) << sweeps.err;
  EXPECT_NE(sweeps.out.find("SEARCH ENDED EARLY"), std::string::npos) << sweeps.out;
  EXPECT_NE(sweeps.out.find(absl::StrCat(invalid_id, "  proposal 0: none of 8 points")), std::string::npos)
      << sweeps.out;
  const Outcome follow = RunNmctl(address, {"follow", absl::StrCat(invalid_id)});
  EXPECT_EQ(follow.exit_code, 4) << follow.out << follow.err;
  EXPECT_NE(follow.out.find("search ended early after 0 of 20 runs: " + reason), std::string::npos)
      << follow.out;
  auto dashboard = server::DashboardServer::Start(server.server().coordinator(), {"127.0.0.1:0"});
  ASSERT_TRUE(dashboard.ok()) << dashboard.status();
  httplib::Client http("127.0.0.1", (*dashboard)->port());
  const httplib::Result page = http.Get(absl::StrCat("/sweeps/", invalid_id));
  ASSERT_TRUE(page) << httplib::to_string(page.error());
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(
      page->body.find("<p id=\"search-ended\" class=\"FAILED\">search ended early: proposal 0: none of 8"),
      std::string::npos)
      << page->body;
  EXPECT_NE(page->body.find("must be &lt;= schedule.epochs (10)"), std::string::npos) << "escaped";
  const httplib::Result good = http.Get(absl::StrCat("/sweeps/", huge_id));
  ASSERT_TRUE(good);
  EXPECT_EQ(good->body.find("search-ended") == std::string::npos,
            GetSweep(server, huge_id).search_ended().empty());
  (*dashboard)->Stop();

  const Outcome cancel = RunNmctl(address, {"cancel", "--sweep", absl::StrCat(invalid_id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_TRUE(GetSweep(server, invalid_id).cancelled());
}

}  // namespace
}  // namespace nmsparse
