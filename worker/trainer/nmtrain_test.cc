// End-to-end tests of the nmtrain binary: real processes, real Gloo rendezvous, exit codes, signals.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "contract/trainer_flags.h"
#include "gtest/gtest.h"
#include "schemas/model_catalog.h"
#include "worker/compat/torch_compat.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/data/image_testing.h"
#include "worker/trainer/device/blas_core_choice.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/trainer_error.h"
#include "worker/trainer/trainer_testing.h"

extern char** environ;

namespace nmsparse {
namespace {

std::string NmtrainPath() {
  if (const char* srcdir = std::getenv("TEST_SRCDIR"))
    return std::string(srcdir) + "/nmsparse/worker/trainer/nmtrain";
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string path(self, n > 0 ? n : 0);
  return path.substr(0, path.rfind('/')) + "/nmtrain";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Starts nmtrain with `args` and extra environment variables ("NAME=value" replaces an inherited one, a bare
// "NAME" removes it); stdout and stderr go to files.
pid_t Start(const std::vector<std::string>& args, const std::vector<std::string>& env,
            const std::string& stdout_path, const std::string& stderr_path) {
  const pid_t pid = fork();
  if (pid == 0) {
    freopen(stdout_path.c_str(), "w", stdout);
    freopen(stderr_path.c_str(), "w", stderr);
    std::vector<std::string> all_env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string inherited = *e;
      const std::string name = inherited.substr(0, inherited.find('='));
      bool replaced = false;
      for (const auto& v : env) replaced = replaced || v.substr(0, v.find('=')) == name;
      if (!replaced) all_env.push_back(inherited);
    }
    for (const auto& v : env) {
      if (v.find('=') != std::string::npos) all_env.push_back(v);
    }
    std::vector<char*> argv, envp;
    static std::string binary = NmtrainPath();
    argv.push_back(binary.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : all_env) envp.push_back(e.data());
    envp.push_back(nullptr);
    execve(binary.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

// Exit code (128 + signal when killed); -1 after `timeout` (the process is then killed).
int Wait(pid_t pid, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

bool WaitForText(const std::string& path, const std::string& text, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadFile(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string WriteSpec(const std::string& dir, const std::string& yaml) {
  const std::string path = dir + "/spec.yaml";
  std::ofstream(path) << yaml;
  return path;
}

std::vector<std::string> RankEnv(int rank, int world, int port) {
  return {"RANK=" + std::to_string(rank), "WORLD_SIZE=" + std::to_string(world),
          "LOCAL_RANK=" + std::to_string(rank), "MASTER_ADDR=127.0.0.1",
          "MASTER_PORT=" + std::to_string(port)};
}

constexpr char kSmallRun[] = R"(
seed: 3
model: {name: vit_nano_patch7_28}
data: {dataset: fashion_mnist, train_subset: 512, eval_subset: 200, batch_size: 64, random_crop_padding: 2}
optimizer: {lr: 0.002, clip_grad_norm: 1.0}
schedule: {epochs: 1, warmup_epochs: 0.25}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FF}
)";

// A long run for the signal and failure tests (stopped long before it ends).
constexpr char kLongRun[] = R"(
seed: 3
model: {name: vit_nano_patch7_28}
data: {dataset: fashion_mnist, train_subset: 60000, eval_subset: 100, batch_size: 16}
schedule: {epochs: 3, log_every_steps: 1}
)";

// Two ranks with 32 images each train the same model as one rank with the global batch of 64.
TEST(NmtrainTest, TwoRanksMatchOneRankWithTheSameGlobalBatch) {
  // pip's LibTorch wheels ship no Gloo headers, so the CMake build against them has no CPU process group:
  // there, multi-rank CPU runs are covered by the Bazel build against Debian's LibTorch (docs/gpu.md).
  if (!NMSPARSE_HAS_GLOO) GTEST_SKIP() << "this LibTorch ships no Gloo headers: no multi-rank CPU runs here";
  const std::string dir = TestTempDir("ddp");
  const std::string spec = WriteSpec(dir, kSmallRun);
  const pid_t single = Start({"--spec", spec, "--out", dir + "/one"}, {}, dir + "/one.out", dir + "/one.err");
  ASSERT_EQ(Wait(single, std::chrono::seconds(120)), 0) << ReadFile(dir + "/one.err");
  const int port = FreeLoopbackPort();
  const pid_t r0 =
      Start({"--spec", spec, "--out", dir + "/two"}, RankEnv(0, 2, port), dir + "/r0.out", dir + "/r0.err");
  const pid_t r1 =
      Start({"--spec", spec, "--out", dir + "/two"}, RankEnv(1, 2, port), dir + "/r1.out", dir + "/r1.err");
  ASSERT_EQ(Wait(r0, std::chrono::seconds(120)), 0) << ReadFile(dir + "/r0.err");
  ASSERT_EQ(Wait(r1, std::chrono::seconds(120)), 0) << ReadFile(dir + "/r1.err");
  EXPECT_NE(ReadFile(dir + "/r0.out").find("\"kind\":\"final\""), std::string::npos);
  EXPECT_EQ(ReadFile(dir + "/r1.out"), "");  // Only rank 0 prints metrics.

  auto a = ExpectSameCheckpointWeights("vit_nano_patch7_28", dir + "/one", dir + "/two",
                                       WeightTolerance{1e-4, 1e-5});
  // Training changed the weights, so the comparison means something.
  EXPECT_GT(DistanceFromFreshWeights("vit_nano_patch7_28", *a), 1.0);
}

// Dropout and drop-path draw different masks on every rank: stopped after 5 steps and resumed, a 2-rank run
// ends with exactly the weights of an uninterrupted one only if every rank's generator state was kept.
TEST(NmtrainTest, TwoRanksWithDropoutResumeExactly) {
  // pip's LibTorch wheels ship no Gloo headers, so the CMake build against them has no CPU process group:
  // there, multi-rank CPU runs are covered by the Bazel build against Debian's LibTorch (docs/gpu.md).
  if (!NMSPARSE_HAS_GLOO) GTEST_SKIP() << "this LibTorch ships no Gloo headers: no multi-rank CPU runs here";
  const std::string dir = TestTempDir("ddp_resume");
  const std::string spec = WriteSpec(dir, R"(
seed: 5
model: {name: vit_nano_patch7_28, drop_rate: 0.2, drop_path_rate: 0.2}
data: {dataset: fashion_mnist, train_subset: 512, eval_subset: 100, batch_size: 64}
schedule: {epochs: 1, warmup_epochs: 0.25}
)");
  auto run_two_ranks = [&](const std::string& out, std::vector<std::string> extra, int expected) {
    const int port = FreeLoopbackPort();
    std::vector<std::string> args = {"--spec", spec, "--out", dir + "/" + out};
    args.insert(args.end(), extra.begin(), extra.end());
    const pid_t r0 =
        Start(args, RankEnv(0, 2, port), dir + "/" + out + ".r0.out", dir + "/" + out + ".r0.err");
    const pid_t r1 =
        Start(args, RankEnv(1, 2, port), dir + "/" + out + ".r1.out", dir + "/" + out + ".r1.err");
    ASSERT_EQ(Wait(r0, std::chrono::seconds(120)), expected) << ReadFile(dir + "/" + out + ".r0.err");
    ASSERT_EQ(Wait(r1, std::chrono::seconds(120)), expected) << ReadFile(dir + "/" + out + ".r1.err");
  };
  run_two_ranks("straight", {}, 0);
  run_two_ranks("resumed", {"--stop-after-steps", "5"}, kExitTerminated);
  run_two_ranks("resumed", {"--resume"}, 0);
  EXPECT_NE(ReadFile(dir + "/resumed.r0.err").find("resuming"), std::string::npos);

  ExpectSameCheckpointWeights("vit_nano_patch7_28", dir + "/straight", dir + "/resumed");
}

TEST(NmtrainTest, BadSpecExitsWithCode2AndNamesTheKey) {
  const std::string dir = TestTempDir("badspec");
  const std::string spec =
      WriteSpec(dir, "model: {name: vit_nano_patch7_28}\noptimizer: {learning_rate: 0.1}\n");
  const pid_t pid = Start({"--spec", spec, "--out", dir + "/out"}, {}, dir + "/out.txt", dir + "/err.txt");
  EXPECT_EQ(Wait(pid, std::chrono::seconds(30)), 2);
  EXPECT_NE(ReadFile(dir + "/err.txt").find("learning_rate"), std::string::npos)
      << ReadFile(dir + "/err.txt");
  const std::string bad_nm =
      WriteSpec(dir,
                "model: {name: vit_nano_patch7_28}\nsparsity: {sparsity_type: STRUCTURED_NM, n_sparsity: 5, "
                "m_sparsity: 4}\n");
  const pid_t nm = Start({"--spec", bad_nm, "--out", dir + "/out"}, {}, dir + "/out.txt", dir + "/err2.txt");
  EXPECT_EQ(Wait(nm, std::chrono::seconds(30)), 2) << ReadFile(dir + "/err2.txt");
  const std::string bad_precision =
      WriteSpec(dir, "model: {name: vit_nano_patch7_28}\nresources:\n  gpus: 1\n  precision: fp16x\n");
  const pid_t precision =
      Start({"--spec", bad_precision, "--out", dir + "/out"}, {}, dir + "/out.txt", dir + "/err4.txt");
  EXPECT_EQ(Wait(precision, std::chrono::seconds(30)), 2);
  EXPECT_NE(ReadFile(dir + "/err4.txt")
                .find("spec.yaml:4: resources.precision: value 'fp16x' is not one of fp32, bf16, fp16"),
            std::string::npos)
      << ReadFile(dir + "/err4.txt");
  const pid_t flag = Start({"--spec", bad_precision, "--out", dir + "/out", "--precision", "fp8"}, {},
                           dir + "/out.txt", dir + "/err5.txt");
  EXPECT_EQ(Wait(flag, std::chrono::seconds(30)), 2);
  EXPECT_NE(ReadFile(dir + "/err5.txt").find("--precision: value 'fp8' is not one of fp32, bf16, fp16"),
            std::string::npos)
      << ReadFile(dir + "/err5.txt");
  const pid_t no_args = Start({"--out", dir}, {}, dir + "/out.txt", dir + "/err3.txt");
  EXPECT_EQ(Wait(no_args, std::chrono::seconds(30)), 2);
  EXPECT_NE(ReadFile(dir + "/err3.txt").find("--spec is required"), std::string::npos);
}

// The flags the worker agent passes (contract/trainer_flags.h) are nmtrain's own, in both spellings that
// --help promises; an unknown one is a usage error (exit 2) that names it, before any spec is read.
TEST(NmtrainTest, TheContractsFlagsAreItsFlagsAndUnknownOnesExit2) {
  const std::string dir = TestTempDir("flags");
  const pid_t help = Start({"--help"}, {}, dir + "/help.txt", dir + "/help.err");
  ASSERT_EQ(Wait(help, std::chrono::seconds(30)), 0) << ReadFile(dir + "/help.err");
  const std::string listed = ReadFile(dir + "/help.txt");
  for (const char* flag : {contract::kSpecFlag, contract::kOutFlag, contract::kResumeFlag,
                           contract::kThreadsFlag, contract::kInitFromFlag, contract::kDeviceFlag,
                           contract::kExportFlag, contract::kExportWeightsFlag, contract::kExportDtypeFlag}) {
    std::string name = std::string(flag).substr(2);
    std::replace(name.begin(), name.end(), '-', '_');  // Abseil lists the underscore spelling.
    EXPECT_NE(listed.find("--" + name + " "), std::string::npos) << flag << " is not listed:\n" << listed;
  }
  EXPECT_NE(listed.find("--o "), std::string::npos) << listed;  // contract::kExportOutFlag, -o.

  const pid_t unknown =
      Start({"--spec", "x.yaml", "--stop-after-step", "3"}, {}, dir + "/u.txt", dir + "/u.err");
  EXPECT_EQ(Wait(unknown, std::chrono::seconds(30)), 2);
  EXPECT_NE(ReadFile(dir + "/u.err").find("unknown flag '--stop-after-step'"), std::string::npos)
      << ReadFile(dir + "/u.err");
  const pid_t dashed =
      Start({"--validate-only", "--spec", WriteSpec(dir, kSmallRun), "--loader-threads", "0"}, {},
            dir + "/d.txt", dir + "/d.err");
  EXPECT_EQ(Wait(dashed, std::chrono::seconds(60)), 0) << ReadFile(dir + "/d.err");
}

// model.initial_checkpoint_sha256 (issue 39): a weights file other than the one the run was submitted with
// (its SHA-256 differs from the spec's) is refused at start with exit 2, naming the file and both digests.
TEST(NmtrainTest, AWeightsFileOtherThanItsDigestExitsWithCode2) {
  const std::string dir = TestTempDir("weights_digest");
  std::ofstream(dir + "/w.safetensors") << "abc";
  const std::string submitted(64, '0');
  const std::string spec = WriteSpec(dir, "model: {name: vit_nano_patch7_28, initial_checkpoint: " + dir +
                                              "/w.safetensors, initial_checkpoint_sha256: " + submitted +
                                              "}\ndata: {dataset: synthetic, synthetic_size: 64, batch_size: "
                                              "32}\nschedule: {epochs: 1}\n");
  const pid_t pid = Start({"--spec", spec, "--out", dir + "/out"}, {}, dir + "/out.txt", dir + "/err.txt");
  EXPECT_EQ(Wait(pid, std::chrono::seconds(60)), 2) << ReadFile(dir + "/err.txt");
  EXPECT_NE(
      ReadFile(dir + "/err.txt")
          .find("model.initial_checkpoint: the SHA-256 of " + dir +
                "/w.safetensors is ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad, not "
                "model.initial_checkpoint_sha256 " +
                submitted),
      std::string::npos)
      << ReadFile(dir + "/err.txt");
}

// --precision replaces the spec's resources.precision (as --validate-only reports it); without it the spec's
// value (here the default fp32) holds.
// Where a GPU is visible (a GPU node's ctest run, docs/gpu.md), `--device cuda` trains there, in bf16, and
// the metric lines say which GPU: the path a run placed on a GPU slot takes.
TEST(NmtrainTest, TrainsOnTheGpuWhenOneIsThere) {
  if (!torch::cuda::is_available()) {
    GTEST_SKIP() << "no GPU here (this LibTorch has no CUDA, or no GPU is visible); covered on GPU nodes";
  }
  const std::string dir = TestTempDir("gpu");
  const std::string spec = WriteSpec(dir, kSmallRun);
  const pid_t pid = Start({"--spec", spec, "--out", dir + "/run", "--device", "cuda", "--precision", "bf16"},
                          {"CUDA_VISIBLE_DEVICES=0"}, dir + "/out.txt", dir + "/err.txt");
  ASSERT_EQ(Wait(pid, std::chrono::seconds(120)), 0) << ReadFile(dir + "/err.txt");
  const auto final_line = LastMetricFields(ReadFile(dir + "/out.txt"), "final");
  EXPECT_EQ(final_line.at("device").rfind("cuda:0 ", 0), 0u) << final_line.at("device");
  EXPECT_EQ(final_line.at("precision"), "bf16");
  EXPECT_GT(std::stod(final_line.at("top1")), 0.0);
}

TEST(NmtrainTest, PrecisionFlagReplacesTheSpecKey) {
  const std::string dir = TestTempDir("precision");
  const std::string spec = WriteSpec(dir, kSmallRun);
  const pid_t bf16 = Start({"--spec", spec, "--validate-only", "--precision", "BF16"}, {}, dir + "/bf16.txt",
                           dir + "/bf16_err.txt");
  ASSERT_EQ(Wait(bf16, std::chrono::seconds(60)), 0) << ReadFile(dir + "/bf16_err.txt");
  EXPECT_NE(ReadFile(dir + "/bf16.txt").find("precision bf16: forward passes under bf16 autocast"),
            std::string::npos)
      << ReadFile(dir + "/bf16.txt");
  const pid_t fp32 = Start({"--spec", spec, "--validate-only"}, {}, dir + "/fp32.txt", dir + "/fp32_err.txt");
  ASSERT_EQ(Wait(fp32, std::chrono::seconds(60)), 0) << ReadFile(dir + "/fp32_err.txt");
  EXPECT_NE(ReadFile(dir + "/fp32.txt").find("precision fp32: fp32 throughout"), std::string::npos)
      << ReadFile(dir + "/fp32.txt");
}

TEST(NmtrainTest, SigtermStopsAtAStepBoundaryWithACheckpoint) {
  const std::string dir = TestTempDir("sigterm");
  const std::string spec = WriteSpec(dir, kLongRun);
  const pid_t pid = Start({"--spec", spec, "--out", dir + "/out"}, {}, dir + "/out.txt", dir + "/err.txt");
  ASSERT_TRUE(WaitForText(dir + "/out.txt", "\"kind\":\"step\"", std::chrono::seconds(60)))
      << ReadFile(dir + "/err.txt");
  kill(pid, SIGTERM);
  EXPECT_EQ(Wait(pid, std::chrono::seconds(30)), 143) << ReadFile(dir + "/err.txt");
  struct stat st;
  EXPECT_EQ(stat((dir + "/out/checkpoint.pt").c_str(), &st), 0);
  EXPECT_NE(stat((dir + "/out/checkpoint.pt.tmp").c_str(), &st), 0);
}

// The agent passes --resume on every retry, also when the previous attempt had already finished training
// (killed between its final line and its report): the final line must then repeat the run's real results.
TEST(NmtrainTest, ResumingAFinishedRunRepeatsItsFinalLine) {
  const std::string dir = TestTempDir("finished");
  const std::string spec = WriteSpec(dir, kSmallRun);
  const std::vector<std::string> args = {"--spec", spec, "--out", dir + "/out", "--resume"};
  ASSERT_EQ(Wait(Start(args, {}, dir + "/first.txt", dir + "/first_err.txt"), std::chrono::seconds(120)), 0)
      << ReadFile(dir + "/first_err.txt");
  ASSERT_EQ(Wait(Start(args, {}, dir + "/second.txt", dir + "/second_err.txt"), std::chrono::seconds(120)), 0)
      << ReadFile(dir + "/second_err.txt");
  auto final_line = [](const std::string& out) {
    const size_t at = out.find("{\"kind\":\"final\"");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  auto field = [](const std::string& line, const std::string& key) {
    const size_t at = line.find("\"" + key + "\":");
    return at == std::string::npos ? std::string() : line.substr(at, line.find_first_of(",}", at) - at);
  };
  const std::string first = final_line(ReadFile(dir + "/first.txt"));
  const std::string second = final_line(ReadFile(dir + "/second.txt"));
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(second.empty()) << ReadFile(dir + "/second.txt");
  for (const char* key : {"loss", "top1", "top5", "step", "flops"}) {
    EXPECT_FALSE(field(first, key).empty()) << key;
    EXPECT_EQ(field(first, key), field(second, key)) << first << "\n" << second;
  }
}

// A run stopped (as a cancel stops it) with two checkpoints, then its latest damaged behind its back: 64 low
// mantissa bits flipped (LibTorch's reader would load them: it does not check its CRCs), or the file cut. The
// resume names the damaged file, falls back to the previous one and says which file it resumed from.
TEST(NmtrainTest, DamagedCheckpointIsNamedAndThePreviousOneUsed) {
  const std::string dir = TestTempDir("damaged");
  std::string yaml = kSmallRun;
  yaml.replace(yaml.find("epochs: 1"), 9, "epochs: 2");
  const std::string spec = WriteSpec(dir, yaml);
  for (const std::string damage : {"flipped", "truncated"}) {
    const std::string out = dir + "/" + damage;
    const std::vector<std::string> stop = {"--spec", spec, "--out", out, "--stop-after-steps", "10"};
    ASSERT_EQ(Wait(Start(stop, {}, dir + "/stop.txt", dir + "/stop_err.txt"), std::chrono::seconds(120)), 143)
        << ReadFile(dir + "/stop_err.txt");  // Checkpoints at step 8 (epoch 1's end) and step 10.
    const std::string latest = CheckpointPath(out);
    std::string bytes = ReadFile(latest);
    ASSERT_GT(bytes.size(), 10000u);
    if (damage == "flipped") {
      for (size_t k = 0; k < 64; ++k) bytes[bytes.size() / 4 + k * (bytes.size() / 2 / 64)] ^= 1;
    } else {
      bytes.resize(100);
    }
    std::ofstream(latest, std::ios::binary | std::ios::trunc) << bytes;
    const std::vector<std::string> resume = {"--spec", spec, "--out", out, "--resume"};
    const std::string err = dir + "/" + damage + "_err.txt";
    ASSERT_EQ(Wait(Start(resume, {}, dir + "/resume.txt", err), std::chrono::seconds(120)), 0)
        << ReadFile(err);
    const std::string log = ReadFile(err);
    if (damage == "flipped") {
      EXPECT_NE(log.find("checkpoint " + latest + " is damaged"), std::string::npos) << log;
    }
    EXPECT_NE(log.find("falling back to the previous checkpoint " + PreviousCheckpointPath(out)),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("resuming from " + PreviousCheckpointPath(out) + " at epoch 1, step 8"),
              std::string::npos)
        << log;
  }
}

// A fork (nmctl fork; the agent passes --init-from): the parent's checkpoint is the start when the fork's
// own directory has none; a missing one, or one past the fork's schedule, is a bad-spec exit naming it.
TEST(NmtrainTest, ForkStartsFromItsParentsCheckpoint) {
  const std::string dir = TestTempDir("fork");
  auto with = [](std::string text, const std::string& from, const std::string& to) {
    return text.replace(text.find(from), from.size(), to);
  };
  const std::string parent_spec = WriteSpec(dir, kSmallRun);
  ASSERT_EQ(
      Wait(Start({"--spec", parent_spec, "--out", dir + "/parent"}, {}, dir + "/p.txt", dir + "/p_err.txt"),
           std::chrono::seconds(120)),
      0)
      << ReadFile(dir + "/p_err.txt");
  auto fork = [&](const std::string& name, const std::string& spec_text, const std::string& from) {
    const std::string spec_dir = dir + "/" + name + "_spec";
    mkdir(spec_dir.c_str(), 0755);
    const std::vector<std::string> args = {
        "--spec", WriteSpec(spec_dir, spec_text), "--out", dir + "/" + name, "--resume", "--init-from", from};
    return Wait(Start(args, {}, dir + "/" + name + ".txt", dir + "/" + name + "_err.txt"),
                std::chrono::seconds(120));
  };
  // 512 images in batches of 64: the parent stops at step 8; two epochs continue to step 16.
  ASSERT_EQ(fork("longer", with(kSmallRun, "epochs: 1", "epochs: 2"), dir + "/parent"), 0)
      << ReadFile(dir + "/longer_err.txt");
  EXPECT_NE(ReadFile(dir + "/longer_err.txt")
                .find("forking from " + dir + "/parent/checkpoint.pt at epoch 1, step 8"),
            std::string::npos)
      << ReadFile(dir + "/longer_err.txt");
  EXPECT_NE(ReadFile(dir + "/longer.txt").find("\"step\":16"), std::string::npos)
      << ReadFile(dir + "/longer.txt");
  EXPECT_EQ(fork("orphan", kSmallRun, dir + "/nowhere"), kExitUsage);
  EXPECT_NE(
      ReadFile(dir + "/orphan_err.txt").find("fork: no parent checkpoint " + dir + "/nowhere/checkpoint.pt"),
      std::string::npos)
      << ReadFile(dir + "/orphan_err.txt");
  // Batches of 128: 4 steps in the fork's one epoch, fewer than the parent's 8.
  EXPECT_EQ(fork("shorter", with(kSmallRun, "batch_size: 64", "batch_size: 128"), dir + "/parent"),
            kExitUsage);
  EXPECT_NE(ReadFile(dir + "/shorter_err.txt").find("is at step 8, past this run's 4 steps"),
            std::string::npos)
      << ReadFile(dir + "/shorter_err.txt");
}

TEST(NmtrainTest, SurvivingRankExitsWithCode5WhenAPeerDies) {
  // pip's LibTorch wheels ship no Gloo headers, so the CMake build against them has no CPU process group:
  // there, multi-rank CPU runs are covered by the Bazel build against Debian's LibTorch (docs/gpu.md).
  if (!NMSPARSE_HAS_GLOO) GTEST_SKIP() << "this LibTorch ships no Gloo headers: no multi-rank CPU runs here";
  const std::string dir = TestTempDir("peerdeath");
  const std::string spec = WriteSpec(dir, kLongRun);
  const int port = FreeLoopbackPort();
  const std::vector<std::string> args = {"--spec", spec, "--out", dir + "/out", "--timeout-s", "20"};
  const pid_t r0 = Start(args, RankEnv(0, 2, port), dir + "/r0.out", dir + "/r0.err");
  const pid_t r1 = Start(args, RankEnv(1, 2, port), dir + "/r1.out", dir + "/r1.err");
  ASSERT_TRUE(WaitForText(dir + "/r0.out", "\"kind\":\"step\"", std::chrono::seconds(60)))
      << ReadFile(dir + "/r0.err");
  kill(r1, SIGKILL);
  Wait(r1, std::chrono::seconds(10));
  EXPECT_EQ(Wait(r0, std::chrono::seconds(40)), 5) << ReadFile(dir + "/r0.err");
  EXPECT_NE(ReadFile(dir + "/r0.err").find("distributed failure"), std::string::npos)
      << ReadFile(dir + "/r0.err");
}

TEST(NmtrainTest, RendezvousTimesOutWithCode5) {
  const std::string dir = TestTempDir("lonely");
  const std::string spec = WriteSpec(dir, kSmallRun);
  const pid_t r0 = Start({"--spec", spec, "--out", dir + "/out", "--timeout-s", "2"},
                         RankEnv(0, 2, FreeLoopbackPort()), dir + "/r0.out", dir + "/r0.err");
  EXPECT_EQ(Wait(r0, std::chrono::seconds(60)), 5) << ReadFile(dir + "/r0.err");
}

// An ImageFolder of 2 classes x 8 training and 2 x 4 evaluation JPEGs of 32x32 under `dir`/folder, with the
// files `corrupt` (relative paths) truncated.
std::string MakeFolder(const std::string& dir, const std::vector<std::string>& corrupt) {
  const std::string root = dir + "/folder";
  for (const auto& [split, per_class] : {std::pair<std::string, int>{"train", 8}, {"val", 4}}) {
    for (const std::string cls : {"a", "b"}) {
      MakeDirs(root + "/" + split + "/" + cls);
      for (int i = 0; i < per_class; ++i) {
        WriteTestFile(root + "/" + split + "/" + cls + "/" + std::to_string(i) + ".jpg",
                      MakeTestJpeg(32, 32, TestJpegKind::kRgb420, i));
      }
    }
  }
  for (const auto& file : corrupt) {
    const std::string jpeg = MakeTestJpeg(32, 32);
    WriteTestFile(root + "/" + file, jpeg.substr(0, jpeg.size() / 2));
  }
  return root;
}

std::string FolderRun(const std::string& root) {
  return R"(
seed: 3
model: {name: vit_nano_patch7_28, in_chans: 3, num_classes: 2}
data: {dataset: imagefolder, path: )" +
         root + R"(, batch_size: 8, eval_batch_size: 8, workers: 1}
schedule: {epochs: 1}
)";
}

// The line of `text` holding `needle` ("" when none).
std::string LineWith(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  return text.substr(begin, text.find('\n', at) - begin);
}

// Two ranks where only one rank's share holds the undecodable images: the counts are summed over ranks at
// the epoch's end, so both ranks fail together, with the same data error naming the files, instead of one
// failing and the other waiting for the collective timeout (exit 5).
void ExpectBothRanksFailAlike(const std::string& name, const std::vector<std::string>& corrupt,
                              const std::string& what, const std::string& metric) {
  const std::string dir = TestTempDir(name);
  const std::string spec = WriteSpec(dir, FolderRun(MakeFolder(dir, corrupt)));
  const int port = FreeLoopbackPort();
  const std::vector<std::string> args = {"--spec", spec, "--out", dir + "/out", "--timeout-s", "60"};
  const pid_t r0 = Start(args, RankEnv(0, 2, port), dir + "/r0.out", dir + "/r0.err");
  const pid_t r1 = Start(args, RankEnv(1, 2, port), dir + "/r1.out", dir + "/r1.err");
  EXPECT_EQ(Wait(r0, std::chrono::seconds(240)), kExitData) << ReadFile(dir + "/r0.err");
  EXPECT_EQ(Wait(r1, std::chrono::seconds(240)), kExitData) << ReadFile(dir + "/r1.err");
  const std::string error = LineWith(ReadFile(dir + "/r0.err"), "could not be decoded");
  EXPECT_NE(error.find(std::to_string(corrupt.size()) + " " + what), std::string::npos) << error;
  EXPECT_EQ(error, LineWith(ReadFile(dir + "/r1.err"), "could not be decoded"));
  const std::string r0_err = ReadFile(dir + "/r0.err");
  for (const auto& file : corrupt) EXPECT_NE(r0_err.find(file), std::string::npos) << r0_err;
  // Rank 0's epoch line counted all ranks' failures before the check.
  EXPECT_NE(ReadFile(dir + "/r0.out").find("\"" + metric + "\":" + std::to_string(corrupt.size())),
            std::string::npos)
      << ReadFile(dir + "/r0.out");
}

TEST(NmtrainTest, UndecodableEvaluationImagesOfOneRankFailBothRanks) {
  if (!NMSPARSE_HAS_GLOO) GTEST_SKIP() << "this LibTorch ships no Gloo headers: no multi-rank CPU runs here";
  // Rank r evaluates images r, r + 2, ...: val/a/1.jpg and val/a/3.jpg (images 1 and 3) are rank 1's only.
  ExpectBothRanksFailAlike("eval_decode", {"val/a/1.jpg", "val/a/3.jpg"}, "evaluation images",
                           "eval_decode_failures");
}

TEST(NmtrainTest, AnUndecodableTrainingImageFailsBothRanks) {
  if (!NMSPARSE_HAS_GLOO) GTEST_SKIP() << "this LibTorch ships no Gloo headers: no multi-rank CPU runs here";
  // One file is in one rank's share of the epoch, whichever the shuffle picks.
  ExpectBothRanksFailAlike("train_decode", {"train/b/5.jpg"}, "training images", "decode_failures");
}

// The CPU's features as this test sees them, apart from nmtrain's own detection.
CpuFeatures TestCpu() {
  CpuFeatures cpu;
#if defined(__x86_64__)
  cpu.avx = __builtin_cpu_supports("avx");
  cpu.avx2 = __builtin_cpu_supports("avx2");
  cpu.fma = __builtin_cpu_supports("fma");
  cpu.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
  cpu.amd = __builtin_cpu_is("amd");
#endif
  return cpu;
}

// With OPENBLAS_CORETYPE unset, nmtrain runs kernels that fit the CPU and names them in its log and metric
// lines: here OpenBLAS's own choice is taken to be the generic "Prescott" (what Debian's 0.3.21 picks on a
// Xeon model it does not know), so the run only fits the CPU if nmtrain re-executed itself with a better
// core.
TEST(NmtrainTest, RunsABlasCoreThatFitsTheCpu) {
  if (WidestIsa(TestCpu()) < CpuIsa::kAvx2)
    GTEST_SKIP() << "this CPU has no AVX2 with FMA: no core to correct";
  const std::string dir = TestTempDir("blas_core");
  const std::string spec = WriteSpec(dir, kSmallRun);
  const pid_t plain = Start({"--spec", spec, "--validate-only"}, {"OPENBLAS_CORETYPE"}, dir + "/plain.txt",
                            dir + "/plain_err.txt");
  ASSERT_EQ(Wait(plain, std::chrono::seconds(60)), 0) << ReadFile(dir + "/plain_err.txt");
  const std::string plain_log = ReadFile(dir + "/plain_err.txt");
  if (plain_log.find("core n/a") != std::string::npos)
    GTEST_SKIP() << "this BLAS is not OpenBLAS: " << plain_log;
  EXPECT_EQ(plain_log.find("warning"), std::string::npos) << plain_log;
  const size_t core_at = plain_log.find(", core ");
  ASSERT_NE(core_at, std::string::npos) << plain_log;
  const std::string plain_core =
      plain_log.substr(core_at + 7, plain_log.find(' ', core_at + 7) - core_at - 7);
  EXPECT_FALSE(IsFallbackCore(plain_core, TestCpu())) << plain_log;

  const pid_t pid =
      Start({"--spec", spec, "--out", dir + "/out"}, {"OPENBLAS_CORETYPE", "NMTRAIN_TEST_BLAS_CORE=Prescott"},
            dir + "/out.txt", dir + "/err.txt");
  ASSERT_EQ(Wait(pid, std::chrono::seconds(120)), 0) << ReadFile(dir + "/err.txt");
  const std::string log = ReadFile(dir + "/err.txt");
  const std::string expected_core = OpenBlasCoreFor(TestCpu());
  EXPECT_NE(log.find("core " + expected_core + " (corrected from Prescott)"), std::string::npos) << log;
  const auto final_line = LastMetricFields(ReadFile(dir + "/out.txt"), "final");
  ASSERT_FALSE(final_line.empty()) << ReadFile(dir + "/out.txt");
  EXPECT_EQ(final_line.at("blas_core"), expected_core);
  EXPECT_FALSE(IsFallbackCore(final_line.at("blas_core"), TestCpu()));
  EXPECT_EQ(final_line.at("cpu_isa"), CpuIsaName(WidestIsa(TestCpu())));
  EXPECT_NE(final_line.at("blas").find("OpenBLAS"), std::string::npos) << final_line.at("blas");
}

// A core the user asked for stays, slow or not (older OpenBLAS builds compute wrong results on some CPUs with
// their own choice); on a CPU with AVX2 nmtrain says what it costs.
TEST(NmtrainTest, KeepsTheBlasCoreTheUserSet) {
  const std::string dir = TestTempDir("blas_user_core");
  const std::string spec = WriteSpec(dir, kSmallRun);
  const pid_t pid = Start({"--spec", spec, "--validate-only"},
                          {"OPENBLAS_CORETYPE=Prescott", "NMTRAIN_TEST_BLAS_CORE=Prescott"}, dir + "/out.txt",
                          dir + "/err.txt");
  ASSERT_EQ(Wait(pid, std::chrono::seconds(60)), 0) << ReadFile(dir + "/err.txt");
  const std::string log = ReadFile(dir + "/err.txt");
  if (log.find("core n/a") != std::string::npos) GTEST_SKIP() << "this BLAS is not OpenBLAS: " << log;
  EXPECT_NE(log.find("core Prescott (OPENBLAS_CORETYPE=Prescott set by the user)"), std::string::npos) << log;
  if (WidestIsa(TestCpu()) >= CpuIsa::kAvx2) {
    EXPECT_NE(log.find("warning: core Prescott is below this CPU's"), std::string::npos) << log;
  }
}

}  // namespace
}  // namespace nmsparse
