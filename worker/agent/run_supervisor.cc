#include "worker/agent/run_supervisor.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/checked_file.h"
#include "contract/metric_names.h"
#include "contract/nmtrain_exit_codes.h"
#include "contract/run_directory.h"
#include "contract/trainer_flags.h"
#include "worker/agent/metric_line_parser.h"
#include "worker/agent/rank_process.h"

namespace nmsparse::agent {
namespace {

constexpr size_t kStderrTailLines = 20;
constexpr size_t kStderrTailChars = 2000;
constexpr auto kPollInterval = std::chrono::milliseconds(50);

absl::Status MakeDirs(const std::string& path) {
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, pos);
    if (prefix.empty()) continue;
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return FileError(errno, prefix);
  }
  return absl::OkStatus();
}

}  // namespace

int RunSupervisor::PickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool RunSupervisor::PortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;  // Cannot tell: let rank 0 try.
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return free;
}

RunSupervisor::RunSupervisor(RunLaunch launch, RunCallbacks callbacks)
    : launch_(std::move(launch)), callbacks_(std::move(callbacks)) {}

RunSupervisor::~RunSupervisor() {
  Stop(StopReason::kShutdown);
  Join();
}

void RunSupervisor::Start() {
  thread_ = std::thread([this] { Main(); });
}

void RunSupervisor::Stop(StopReason reason) {
  StopReason expected = StopReason::kNone;
  stop_.compare_exchange_strong(expected, reason);
}

void RunSupervisor::Join() {
  if (thread_.joinable()) thread_.join();
}

void RunSupervisor::Main() {
  RunOutcome outcome = Supervise();
  if (callbacks_.on_done) callbacks_.on_done(outcome);
  done_ = true;
}

void RunSupervisor::OnStdout(uint32_t rank, absl::string_view line) {
  if (rank == 0) {
    if (std::optional<ParsedMetricLine> metric = ParseMetricLine(line)) {
      if (metric->is_final) {
        std::lock_guard<std::mutex> lock(mu_);
        final_labels_.insert(metric->point.labels().begin(), metric->point.labels().end());
      }
      metric->point.set_run_id(launch_.run_id);
      metric->point.set_attempt(launch_.attempt);
      if (callbacks_.on_metric) callbacks_.on_metric(std::move(metric->point));
      return;
    }
  }
  if (callbacks_.on_log) callbacks_.on_log(rank, line);
}

void RunSupervisor::OnStderr(uint32_t rank, absl::string_view line) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stderr_tail_.push_back(launch_.ranks.size() > 1 || launch_.nodes > 1
                               ? absl::StrCat("[rank ", rank, "] ", line)
                               : std::string(line));
    if (stderr_tail_.size() > kStderrTailLines) stderr_tail_.pop_front();
  }
  if (callbacks_.on_log) callbacks_.on_log(rank, line);
}

RunOutcome RunSupervisor::Supervise() {
  RunOutcome outcome;
  const size_t world = launch_.ranks.empty() ? 1 : launch_.ranks.size();
  const std::string spec_path = launch_.run_dir + "/" + contract::NodeSpecFileName(launch_.node_rank);
  // A full or read-only disk fails the attempt, which is retried (exit code -1 is not permanent); the
  // trainer never sees a short spec.
  absl::Status written = MakeDirs(launch_.run_dir);
  if (written.ok()) written = WriteFileAtomically(spec_path, launch_.spec_yaml);
  if (!written.ok()) {
    outcome.state = v1::FAILED;
    outcome.exit_code = -1;
    outcome.message = absl::StrCat("nmworker cannot write the run's spec: ", written.message());
    return outcome;
  }

  if (absl::Status devices = CheckRankDevices(launch_); !devices.ok()) {
    outcome.state = v1::FAILED;
    outcome.exit_code = -1;
    outcome.message = absl::StrCat("nmworker cannot start the run: ", devices.message());
    return outcome;
  }

  // Ranks are started from this thread, which lives until they have ended (PR_SET_PDEATHSIG follows it).
  const std::vector<std::string> base_env = AgentEnvironmentForRanks();
  // A gang's port comes from the coordinator (the same on every node); one node picks a free one.
  const int port = launch_.master_port > 0 ? launch_.master_port : PickFreePort();
  std::vector<std::unique_ptr<RankProcess>> ranks;
  for (size_t r = 0; r < world && stop_.load() == StopReason::kNone; ++r) {
    RankCommand command = MakeRankCommand(launch_, r, port, base_env, spec_path);
    const uint32_t rank = static_cast<uint32_t>(GlobalRank(launch_, r));  // Logs are tagged by global rank.
    absl::StatusOr<std::unique_ptr<RankProcess>> process = RankProcess::Start(
        command, [this, rank](absl::string_view line) { OnStdout(rank, line); },
        [this, rank](absl::string_view line) { OnStderr(rank, line); });
    if (!process.ok()) {
      for (auto& p : ranks) p->Signal(SIGKILL);
      for (auto& p : ranks) p->Wait();
      outcome.state = v1::FAILED;
      outcome.exit_code = -1;
      outcome.message = absl::StrCat("nmworker cannot start rank ", r, ": ", process.status().message());
      return outcome;
    }
    ranks.push_back(*std::move(process));
  }
  if (ranks.size() == world && callbacks_.on_started) callbacks_.on_started();

  // Watch the ranks: the first non-zero exit, or a stop request, brings the others down.
  std::optional<std::pair<uint32_t, int>> first_failure;
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  std::vector<std::optional<int>> codes(ranks.size());
  for (;;) {
    size_t running = 0;
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (!codes[r].has_value()) codes[r] = ranks[r]->Poll();
      if (!codes[r].has_value()) {
        ++running;
      } else if (*codes[r] != 0 && !first_failure.has_value()) {
        first_failure = {static_cast<uint32_t>(GlobalRank(launch_, r)), *codes[r]};
      }
    }
    if (running == 0) break;
    const bool stopping = stop_.load() != StopReason::kNone || first_failure.has_value();
    if (stopping && !kill_at.has_value()) {
      for (auto& p : ranks) p->Signal(SIGTERM);
      kill_at = std::chrono::steady_clock::now() + launch_.kill_grace;
    } else if (kill_at.has_value() && std::chrono::steady_clock::now() >= *kill_at) {
      for (auto& p : ranks) p->Signal(SIGKILL);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  for (auto& p : ranks) p->Wait();  // Drains the pipes: every line has been handed out.

  std::string tail;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tail = absl::StrJoin(stderr_tail_, "\n");
  }
  if (tail.size() > kStderrTailChars) tail = "..." + tail.substr(tail.size() - kStderrTailChars);

  switch (stop_.load()) {
    case StopReason::kCancel:
      outcome.state = v1::CANCELLED;
      outcome.exit_code = first_failure ? first_failure->second : 0;
      outcome.message = "cancelled";
      return outcome;
    case StopReason::kStale:
      outcome.state = v1::FAILED;
      outcome.report = false;
      outcome.message = "attempt is stale";
      return outcome;
    case StopReason::kShutdown:
      outcome.state = v1::FAILED;
      outcome.exit_code = first_failure ? first_failure->second : contract::kExitTerminated;
      outcome.message = "nmworker shut down";
      return outcome;
    case StopReason::kHandBack:
      outcome.state = v1::QUEUED;
      outcome.exit_code = first_failure ? first_failure->second : contract::kExitTerminated;
      outcome.message = "nmworker is leaving; stopped at a checkpoint";
      return outcome;
    case StopReason::kNone:
      break;
  }
  if (ranks.size() < world) {  // Cannot happen without a stop request; kept for safety.
    outcome.state = v1::FAILED;
    outcome.exit_code = -1;
    outcome.message = "not every rank started";
    return outcome;
  }
  if (first_failure.has_value()) {
    const auto [rank, code] = *first_failure;
    outcome.state = v1::FAILED;
    outcome.exit_code = code;
    outcome.message =
        absl::StrCat("rank ", rank, " exited with code ", code, " (", contract::DescribeExit(code), ")");
    if (!tail.empty()) absl::StrAppend(&outcome.message, ":\n", tail);
    return outcome;
  }
  if (std::string wrong = WrongDevice(); !wrong.empty()) {
    outcome.state = v1::FAILED;
    outcome.exit_code = -1;
    outcome.message = wrong;
    return outcome;
  }
  outcome.state = v1::SUCCEEDED;
  return outcome;
}

std::string RunSupervisor::WrongDevice() {
  if (!OnGpus(launch_)) return "";
  std::lock_guard<std::mutex> lock(mu_);
  const auto device = final_labels_.find(contract::kDeviceLabel);
  const std::string reported = device == final_labels_.end() ? "" : device->second;
  if (absl::StartsWith(reported, contract::kDeviceCuda)) return "";
  return absl::StrCat("the run was placed on GPU slots but rank 0 reported ",
                      reported.empty() ? "no device" : absl::StrCat("device '", reported, "'"),
                      " in its final line: a GPU run must train on its GPU (is ", launch_.trainer,
                      " a CUDA build of nmtrain?)");
}

}  // namespace nmsparse::agent
