#include "server/cluster/slurm_launcher.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "server/cluster/command_runner.h"

namespace nmsparse::server {
namespace {

constexpr absl::Duration kCommandTimeout = absl::Seconds(30);

// One word for sh: single-quoted unless it is plain.
std::string ShellWord(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,@+") ==
          std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Slurm's states of a job that has not ended.
JobPhase PhaseOf(const std::string& state) {
  if (state == "PENDING" || state == "REQUEUED" || state == "REQUEUE_HOLD" || state == "RESV_DEL_HOLD" ||
      state == "SUSPENDED") {
    return JobPhase::kPending;
  }
  if (state == "RUNNING" || state == "CONFIGURING" || state == "COMPLETING" || state == "RESIZING" ||
      state == "SIGNALING" || state == "STAGE_OUT") {
    return JobPhase::kRunning;
  }
  return JobPhase::kEnded;
}

absl::Status CommandFailed(const std::vector<std::string>& argv, const CommandResult& r) {
  return absl::UnavailableError(absl::StrCat(CommandLine(argv), " exited ", r.exit_code, ": ",
                                             absl::StripAsciiWhitespace(r.err.empty() ? r.out : r.err)));
}

}  // namespace

int64_t ParseSlurmDuration(const std::string& text) {
  std::string t(absl::StripAsciiWhitespace(text));
  int64_t days = 0;
  if (size_t dash = t.find('-'); dash != std::string::npos) {
    if (!absl::SimpleAtoi(t.substr(0, dash), &days)) return -1;
    t = t.substr(dash + 1);
  }
  int64_t total = 0;
  std::vector<std::string> parts = absl::StrSplit(t, ':');
  if (parts.empty() || parts.size() > 3) return -1;
  for (const std::string& p : parts) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(p, &n) || n < 0) return -1;
    total = total * 60 + n;
  }
  return days * 86400 + total;
}

std::vector<LaunchedJob> ParseSqueue(const std::string& text) {
  std::vector<LaunchedJob> jobs;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    std::vector<std::string> f = absl::StrSplit(absl::StripAsciiWhitespace(line), '|');
    if ((f.size() != 5 && f.size() != 6) || f[0].empty()) continue;
    LaunchedJob j;
    j.id = f[0];
    j.state = f[1];
    j.phase = PhaseOf(f[1]);
    j.node = j.phase == JobPhase::kPending ? "" : f[2];
    j.time_left_s = j.phase == JobPhase::kEnded ? -1 : ParseSlurmDuration(f[3]);
    j.reason = f[4] == "None" ? "" : f[4];
    if (uint32_t nodes = 0; f.size() == 6 && absl::SimpleAtoi(f[5], &nodes) && nodes > 0) j.nodes = nodes;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::vector<std::string> SbatchCommand(const SlurmConfig& c, const std::string& coordinator, uint32_t nodes) {
  std::vector<std::string> worker = {
      c.nmworker,
      "--coordinator=" + coordinator,
      "--work_dir=" + c.work_dir,
      // Every worker of the pool is on the one work_dir, so any of them may form a gang with any other.
      "--storage=" + c.work_dir,
      absl::StrCat("--idle_exit_ms=", c.idle_exit_s * 1000),
  };
  if (c.gpus_per_job > 0) {
    worker.push_back(absl::StrCat("--gpus=", c.gpus_per_job));
  } else {
    worker.push_back("--gpus=none");
    worker.push_back(absl::StrCat("--cpu-slots=", c.cpu_slots_per_job));
  }
  worker.insert(worker.end(), c.worker_args.begin(), c.worker_args.end());
  if (nodes > 1) {  // One task per node; srun forwards the B:USR1 warning and scancel's SIGTERM to each.
    const std::string srun = c.slurm_bin_dir.empty() ? "srun" : c.slurm_bin_dir + "/srun";
    worker.insert(worker.begin(), {srun, "--ntasks-per-node=1", "--kill-on-bad-exit=0"});
  }
  std::vector<std::string> words;
  for (const std::string& w : worker) words.push_back(ShellWord(w));
  // exec: nmworker (or srun) is the batch shell itself, so Slurm's B:USR1 signal reaches it. --job comes
  // unquoted so that the shell expands the job id.
  const std::string wrap = absl::StrCat("exec ", absl::StrJoin(words, " "), " --job=slurm:$SLURM_JOB_ID");

  std::vector<std::string> argv = {
      "--parsable",
      "--job-name=" + c.job_name,
      absl::StrCat("--nodes=", std::max<uint32_t>(nodes, 1)),
      nodes > 1 ? "--ntasks-per-node=1" : "--ntasks=1",
      "--time=" + c.time,
      "--chdir=" + c.work_dir,
      "--output=" + c.log_dir + "/%x-%j.out",
  };
  if (c.signal_before_end_s > 0) argv.push_back(absl::StrCat("--signal=B:USR1@", c.signal_before_end_s));
  if (!c.partition.empty()) argv.push_back("--partition=" + c.partition);
  if (!c.account.empty()) argv.push_back("--account=" + c.account);
  if (c.gpus_per_job > 0) argv.push_back(absl::StrCat("--gres=gpu:", c.gpus_per_job));  // Per node.
  if (c.cpus_per_job > 0) argv.push_back(absl::StrCat("--cpus-per-task=", c.cpus_per_job));
  argv.insert(argv.end(), c.sbatch_args.begin(), c.sbatch_args.end());
  argv.push_back("--wrap=" + wrap);
  return argv;
}

std::string SlurmLauncher::Program(const std::string& name) const {
  return config_.slurm_bin_dir.empty() ? name : config_.slurm_bin_dir + "/" + name;
}

uint32_t SlurmLauncher::SlotsPerJob() const {
  return config_.gpus_per_job > 0 ? config_.gpus_per_job : config_.cpu_slots_per_job;
}

std::string SlurmLauncher::JobLogPath(const std::string& id) const {
  return absl::StrCat(config_.log_dir, "/", config_.job_name, "-", id, ".out");
}

absl::StatusOr<std::string> SlurmLauncher::Submit(uint32_t nodes) {
  mkdir(config_.work_dir.c_str(), 0755);
  mkdir(config_.log_dir.c_str(), 0755);
  std::vector<std::string> argv = SbatchCommand(config_, coordinator_, nodes);
  argv.insert(argv.begin(), Program("sbatch"));
  NM_ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv, kCommandTimeout));
  if (r.exit_code != 0) return CommandFailed(argv, r);
  // --parsable prints "id" or "id;cluster".
  std::string id(absl::StripAsciiWhitespace(r.out));
  id = id.substr(0, id.find(';'));
  int64_t number = 0;
  if (!absl::SimpleAtoi(id, &number))
    return absl::InternalError(absl::StrCat("sbatch printed '", r.out, "', not a job id"));
  return id;
}

absl::StatusOr<std::vector<LaunchedJob>> SlurmLauncher::List() {
  const std::vector<std::string> argv = {
      Program("squeue"),           "--noheader", "--me", "--states=all", "--name=" + config_.job_name,
      "--format=%i|%T|%N|%L|%r|%D"};
  NM_ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv, kCommandTimeout));
  if (r.exit_code != 0) return CommandFailed(argv, r);
  return ParseSqueue(r.out);
}

absl::Status SlurmLauncher::Cancel(const std::string& id) {
  const std::vector<std::string> argv = {Program("scancel"), id};
  NM_ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv, kCommandTimeout));
  if (r.exit_code != 0) return CommandFailed(argv, r);
  return absl::OkStatus();
}

}  // namespace nmsparse::server
