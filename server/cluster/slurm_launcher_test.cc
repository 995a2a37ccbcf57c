// The Slurm launcher's pure parts (config, sbatch command line, squeue parsing) and the command runner it
// uses. The real sbatch / squeue / scancel are exercised by tests/slurm_e2e_test.sh against a real Slurm.
#include "server/cluster/slurm_launcher.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/cluster/command_runner.h"
#include "server/cluster/slurm_config.h"

namespace nmsparse::server {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

SlurmConfig Config(const std::string& yaml) {
  absl::StatusOr<std::optional<SlurmConfig>> c = ParseSlurmConfig(yaml, "server.yaml");
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() && c->has_value() ? **c : SlurmConfig{};
}

TEST(SlurmConfigTest, ReadsKeysAndFillsDefaults) {
  SlurmConfig c = Config(
      "slurm:\n  nmworker: /opt/nm/nmworker\n  work_dir: /scratch/nm\n  partition: gpu\n  account: lab\n"
      "  time: '04:00:00'\n  gpus_per_job: 2\n  max_jobs: 8\n  worker_args: [--trainer=/opt/nm/nmtrain]\n");
  EXPECT_EQ(c.partition, "gpu");
  EXPECT_EQ(c.gpus_per_job, 2u);
  EXPECT_EQ(c.max_jobs, 8u);
  EXPECT_EQ(c.log_dir, "/scratch/nm/slurm-logs");
  EXPECT_EQ(c.idle_exit_s, 120);
  EXPECT_EQ(c.worker_args, std::vector<std::string>{"--trainer=/opt/nm/nmtrain"});
}

TEST(SlurmConfigTest, NoSlurmSectionMeansNoLauncher) {
  absl::StatusOr<std::optional<SlurmConfig>> c = ParseSlurmConfig("", "server.yaml");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->has_value());
}

TEST(SlurmConfigTest, ErrorsNameTheFileKeyAndValue) {
  const std::string base = "slurm:\n  nmworker: /a/nmworker\n  work_dir: /w\n";
  EXPECT_THAT(ParseSlurmConfig(base + "  max_jobs: lots\n", "s.yaml").status().message(),
              HasSubstr("s.yaml: slurm.max_jobs: 'lots' must be an integer"));
  EXPECT_THAT(ParseSlurmConfig(base + "  max_jobs: 0\n", "s.yaml").status().message(),
              HasSubstr("slurm.max_jobs: '0' must be at least 1"));
  EXPECT_THAT(ParseSlurmConfig(base + "  partiton: gpu\n", "s.yaml").status().message(),
              HasSubstr("slurm.partiton: unknown key"));
  EXPECT_THAT(ParseSlurmConfig("slurm:\n  work_dir: /w\n", "s.yaml").status().message(),
              HasSubstr("slurm.nmworker: missing"));
  EXPECT_THAT(ParseSlurmConfig("slurm:\n  nmworker: nmworker\n  work_dir: /w\n", "s.yaml").status().message(),
              HasSubstr("slurm.nmworker: 'nmworker' must be an absolute path"));
  EXPECT_THAT(ParseSlurmConfig("slurn:\n  a: 1\n", "s.yaml").status().message(),
              HasSubstr("unknown section 'slurn'"));
  EXPECT_THAT(ParseSlurmConfig("slurm: [\n", "s.yaml").status().message(), HasSubstr("s.yaml:"));
}

TEST(SbatchCommandTest, GpuJob) {
  SlurmConfig c = Config(
      "slurm:\n  nmworker: /opt/nm/nmworker\n  work_dir: /scratch/nm\n  partition: gpu\n  account: lab\n"
      "  time: '04:00:00'\n  gpus_per_job: 2\n  signal_before_end_s: 90\n  worker_args: ['--host=a b']\n");
  std::vector<std::string> argv = SbatchCommand(c, "head:50151");
  EXPECT_THAT(argv, Contains("--gres=gpu:2"));
  EXPECT_THAT(argv, Contains("--partition=gpu"));
  EXPECT_THAT(argv, Contains("--account=lab"));
  EXPECT_THAT(argv, Contains("--time=04:00:00"));
  EXPECT_THAT(argv, Contains("--chdir=/scratch/nm"));
  EXPECT_THAT(argv, Contains("--signal=B:USR1@90"));
  EXPECT_THAT(argv, Contains("--job-name=nmworker"));
  EXPECT_THAT(argv, Contains("--output=/scratch/nm/slurm-logs/%x-%j.out"));
  EXPECT_EQ(argv.back(),
            "--wrap=exec /opt/nm/nmworker --coordinator=head:50151 --work_dir=/scratch/nm "
            "--storage=/scratch/nm --idle_exit_ms=120000 --gpus=2 '--host=a b' --job=slurm:$SLURM_JOB_ID");
  EXPECT_THAT(argv, Contains("--nodes=1"));
  EXPECT_THAT(argv, Contains("--ntasks=1"));
}

TEST(SbatchCommandTest, GangJobRunsOneWorkerPerNodeThroughSrun) {
  SlurmConfig c = Config(
      "slurm:\n  nmworker: /opt/nm/nmworker\n  work_dir: \"/scratch/it's $(x)\"\n  gpus_per_job: 4\n"
      "  slurm_bin_dir: /opt/slurm/bin\n  worker_args: ['--host=`id`; rm -rf /']\n");
  std::vector<std::string> argv = SbatchCommand(c, "head:50151", 3);
  EXPECT_THAT(argv, Contains("--nodes=3"));
  EXPECT_THAT(argv, Contains("--ntasks-per-node=1"));
  EXPECT_THAT(argv, Contains("--gres=gpu:4"));  // Per node.
  EXPECT_TRUE(std::none_of(argv.begin(), argv.end(), [](const std::string& a) { return a == "--ntasks=1"; }));
  // Every user string is one single-quoted word: the shell expands only the job id.
  EXPECT_EQ(argv.back(),
            "--wrap=exec /opt/slurm/bin/srun --ntasks-per-node=1 --kill-on-bad-exit=0 /opt/nm/nmworker "
            "--coordinator=head:50151 '--work_dir=/scratch/it'\\''s $(x)' '--storage=/scratch/it'\\''s $(x)' "
            "--idle_exit_ms=120000 --gpus=4 '--host=`id`; rm -rf /' --job=slurm:$SLURM_JOB_ID");
}

TEST(SbatchCommandTest, CpuOnlyJobHasNoGres) {
  SlurmConfig c = Config(
      "slurm:\n  nmworker: /n/nmworker\n  work_dir: /w\n  gpus_per_job: 0\n  cpu_slots_per_job: 2\n"
      "  cpus_per_job: 4\n  sbatch_args: [--exclusive]\n");
  std::vector<std::string> argv = SbatchCommand(c, "h:1");
  EXPECT_TRUE(
      std::none_of(argv.begin(), argv.end(), [](const std::string& a) { return a.rfind("--gres", 0) == 0; }));
  EXPECT_THAT(argv, Contains("--cpus-per-task=4"));
  EXPECT_THAT(argv, Contains("--exclusive"));
  EXPECT_THAT(argv.back(), HasSubstr("--gpus=none --cpu-slots=2"));
}

TEST(SqueueTest, ParsesStatesNodesTimeLeftAndReasons) {
  std::vector<LaunchedJob> jobs = ParseSqueue(
      "12|PENDING||1:00:00|Resources\n13|RUNNING|node7|1-02:03:04|None\n14|TIMEOUT|node7|0:00|TimeLimit\n"
      "garbage\n");
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].phase, JobPhase::kPending);
  EXPECT_EQ(jobs[0].reason, "Resources");
  EXPECT_EQ(jobs[1].phase, JobPhase::kRunning);
  EXPECT_EQ(jobs[1].node, "node7");
  EXPECT_EQ(jobs[1].time_left_s, 86400 + 2 * 3600 + 3 * 60 + 4);
  EXPECT_EQ(jobs[1].reason, "");
  EXPECT_EQ(jobs[2].phase, JobPhase::kEnded);
  EXPECT_EQ(jobs[2].state, "TIMEOUT");
}

TEST(SqueueTest, ReadsAGangJobsNodeCount) {
  std::vector<LaunchedJob> jobs = ParseSqueue("7|RUNNING|n[1-2]|9:00|None|2\n8|PENDING||10:00|Resources|1\n");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].nodes, 2u);
  EXPECT_EQ(jobs[1].nodes, 1u);
}

TEST(SqueueTest, Durations) {
  EXPECT_EQ(ParseSlurmDuration("5:00"), 300);
  EXPECT_EQ(ParseSlurmDuration("45"), 45);
  EXPECT_EQ(ParseSlurmDuration("UNLIMITED"), -1);
  EXPECT_EQ(ParseSlurmDuration("2-00:00:00"), 2 * 86400);
}

TEST(CommandRunnerTest, ExitCodeAndOutput) {
  absl::StatusOr<CommandResult> r =
      RunCommand({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(CommandRunnerTest, MissingProgramAndTimeout) {
  EXPECT_TRUE(absl::IsNotFound(RunCommand({"/nonexistent/sbatch"}, absl::Seconds(5)).status()));
  absl::StatusOr<CommandResult> slow = RunCommand({"/bin/sleep", "30"}, absl::Milliseconds(200));
  EXPECT_TRUE(absl::IsDeadlineExceeded(slow.status())) << slow.status();
}

}  // namespace
}  // namespace nmsparse::server
