// nmtrain: trains one run of an experiment spec on this machine's ranks (docs/nmtrain.md); `nmtrain --help`
// lists its flags (Abseil flags, parsed as nmserver's and nmworker's are: common/program_flags.h).
//
// Rank 0 prints one JSON object per line on stdout (epoch, step and final metrics); progress goes to stderr.
// Exit codes: 0 ok, 2 usage or bad spec, 3 data error, 4 training error, 5 distributed failure, 143 SIGTERM.
#include <c10/util/Exception.h>
#include <malloc.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/program_flags.h"
#include "contract/run_directory.h"
#include "contract/trainer_flags.h"
#include "schemas/data_pipeline.h"
#include "schemas/experiment_config.h"
#include "worker/trainer/data/transformed_dataset.h"
#include "worker/trainer/device/blas_check.h"
#include "worker/trainer/distributed/distributed.h"
#include "worker/trainer/interop/model_export.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_error.h"

// Spelled as in contract/trainer_flags.h where the worker agent passes them.
ABSL_FLAG(std::string, spec, "", "experiment spec (YAML), or a flat timm reference config");
ABSL_FLAG(std::string, out, "", "checkpoint and spec.yaml go here (rank 0)");
ABSL_FLAG(bool, resume, false, "continue from DIR/checkpoint.pt when present (starts fresh when absent)");
ABSL_FLAG(std::string, init_from, "",
          "a fork: start from PDIR/checkpoint.pt (another run's) when --out has none yet");
ABSL_FLAG(int, threads, 0, "intra-op threads per rank (0: the spec's resources.cpu_threads)");
ABSL_FLAG(int, loader_threads, -1,
          "threads building batches ahead of training (-1: on a GPU max(2, resources.cpu_threads), on the "
          "CPU 0: batches built in the loop)");
ABSL_FLAG(std::string, device, "cpu",
          "cpu, cuda (GPU LOCAL_RANK among the visible ones) or cuda:K; NCCL between ranks in CUDA builds; a "
          "missing GPU is an error, never a CPU fall-back");
ABSL_FLAG(std::string, precision, "",
          "fp32, bf16 or fp16 (autocast of forward passes; fp16 with loss scaling); replaces the spec's "
          "resources.precision, also in DIR/spec.yaml");
ABSL_FLAG(int, timeout_s, 60, "rendezvous / collective timeout in seconds");
ABSL_FLAG(int64_t, stop_after_steps, -1,
          "stop with a checkpoint once N optimizer steps are done in total, exit 143 as after SIGTERM "
          "(--resume continues as if never stopped); -1: never");
ABSL_FLAG(bool, validate_only, false,
          "print the model, its parameter count, every sparse layer's N:M (dynamic sparsity: every "
          "parameter's algorithm and sparsity) and the image transforms; do not train");
ABSL_FLAG(std::string, export, "",
          "CHECKPOINT: write the run's deployable model (every sparse layer hard-masked at its target N:M) "
          "in timm's format to -o DIR: model.safetensors, config.json, sparsity.json, README.md "
          "(docs/interop.md); --spec defaults to the spec.yaml beside CHECKPOINT");
ABSL_FLAG(std::string, o, "", "--export: the directory the model is written to");
ABSL_FLAG(std::string, weights, "final", "--export: final or ema (the model EMA's weights)");
ABSL_FLAG(std::string, dtype, "fp32", "--export: fp32 or bf16");

namespace nmsparse {
namespace {

std::atomic<bool> g_stop{false};

void OnTerminate(int) { g_stop.store(true); }

// The usage line and what the flags' own help does not say; --help lists the flags below after it.
constexpr char kUsageText[] =
    "nmtrain --spec FILE --out DIR [--resume] [--threads N] [--device cpu|cuda|cuda:K] [flags]\n"
    "  nmtrain --export CHECKPOINT -o DIR [--weights final|ema] [--dtype fp32|bf16] [--spec FILE]\n"
    "Flags may be spelled with dashes or underscores (--stop-after-steps, --stop_after_steps).\n"
    "ranks: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (torchrun's variables)\n"
    "BLAS: where OpenBLAS fell back to a generic core on a CPU with AVX2 or AVX-512, nmtrain re-executes\n"
    "      itself once with OPENBLAS_CORETYPE set; a value the user set is kept (docs/nmtrain.md \"BLAS\")\n"
    "tests: NMTRAIN_HOLD_FILE=F with NMTRAIN_HOLD_AFTER_EPOCHS=N (or _STEPS=N) waits after N epochs (steps) "
    "while F exists;\n"
    "       NMTRAIN_TEST_BLAS_CORE=C takes C for OpenBLAS's own choice of core\n"
    "exit codes: 0 ok, 2 usage/bad spec, 3 data error, 4 training error, 5 distributed failure, 143 "
    "SIGTERM";

// The spec nmtrain rewrote into the run directory that holds `checkpoint`.
std::string SpecBesideCheckpoint(const std::string& checkpoint) {
  const size_t slash = checkpoint.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : checkpoint.substr(0, slash);
  return dir + "/" + contract::kSpecFileName;
}

int Usage(const std::string& why) {
  std::cerr << "nmtrain: " << why << " (see nmtrain --help)\n";
  return kExitUsage;
}

// LibTorch frees and reallocates the same activation buffers every step. Above glibc's (dynamic) mmap
// threshold each of them is mmapped, page-faulted in and unmapped again, every step; keeping buffers up to
// 32 MB in the heap and not trimming it makes a micro ViT step about 20% faster here.
void TuneAllocator() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// The log line naming the BLAS and its kernels, and a warning where they are slower than the CPU allows.
void LogBlas() {
  const BlasFacts blas = InspectBlas();
  std::cerr << "nmtrain: " << DescribeBlas(blas) << "\n";
  if (!blas.warning.empty()) std::cerr << "nmtrain: warning: " << blas.warning << "\n";
}

int Main(int argc, char** argv) {
  ReexecForFittingBlasCore(argv);
  TuneAllocator();
  const auto positional = ParseProgramFlags(argc, argv, kUsageText, __FILE__);
  if (!positional) return kExitOk;  // --help or --version.
  if (positional->size() > 1) return Usage("unexpected argument '" + (*positional)[1] + "'");
  std::string spec_path = absl::GetFlag(FLAGS_spec);
  TrainerOptions options;
  options.out_dir = absl::GetFlag(FLAGS_out);
  options.resume = absl::GetFlag(FLAGS_resume);
  options.init_from = absl::GetFlag(FLAGS_init_from);
  options.device = absl::GetFlag(FLAGS_device);
  options.loader_threads = absl::GetFlag(FLAGS_loader_threads);
  options.stop_after_steps = absl::GetFlag(FLAGS_stop_after_steps);
  const bool validate_only = absl::GetFlag(FLAGS_validate_only);
  const int threads = absl::GetFlag(FLAGS_threads);
  const std::string precision = absl::AsciiStrToLower(absl::GetFlag(FLAGS_precision));
  const std::string weights = absl::GetFlag(FLAGS_weights), dtype = absl::GetFlag(FLAGS_dtype);
  if (threads < 0) return Usage("--threads needs N >= 1");
  if (options.loader_threads < -1) return Usage("--loader-threads needs N >= 0");
  if (options.stop_after_steps == 0 || options.stop_after_steps < -1)
    return Usage("--stop-after-steps needs N >= 1");
  if (absl::GetFlag(FLAGS_timeout_s) < 1) return Usage("--timeout-s needs S >= 1");
  options.timeout = std::chrono::seconds(absl::GetFlag(FLAGS_timeout_s));
  if (!precision.empty() && precision != "fp32" && precision != "bf16" && precision != "fp16")
    return Usage("--precision: value '" + absl::GetFlag(FLAGS_precision) +
                 "' is not one of fp32, bf16, fp16");
  if (weights != "final" && weights != "ema")
    return Usage("--weights: value '" + weights + "' is not one of final, ema");
  if (dtype != "fp32" && dtype != "bf16")
    return Usage("--dtype: value '" + dtype + "' is not one of fp32, bf16");
  ExportOptions export_options;
  export_options.checkpoint = absl::GetFlag(FLAGS_export);
  export_options.out_dir = absl::GetFlag(FLAGS_o);
  if (!export_options.checkpoint.empty()) {
    if (export_options.out_dir.empty()) return Usage("--export needs -o DIR");
    if (spec_path.empty()) spec_path = SpecBesideCheckpoint(export_options.checkpoint);
    export_options.ema = weights == "ema";
    export_options.bf16 = dtype == "bf16";
  }
  if (spec_path.empty()) return Usage("--spec is required");
  if (options.out_dir.empty() && !validate_only && export_options.checkpoint.empty())
    return Usage("--out is required");
  LogBlas();

  std::vector<std::string> warnings;
  auto config = LoadExperimentFile(spec_path, &warnings);
  for (const auto& w : warnings) std::cerr << "nmtrain: warning: " << w << "\n";
  if (!config.ok()) {
    std::cerr << "nmtrain: bad spec: " << config.status().message() << "\n";
    return kExitUsage;
  }
  if (!precision.empty()) config->resources.precision = precision;
  if (auto valid = ValidateExperiment(*config); !valid.ok()) {
    std::cerr << "nmtrain: bad spec " << spec_path << ": " << valid.message() << "\n";
    return kExitUsage;
  }
  options.threads = threads > 0 ? threads : std::max(1, config->resources.cpu_threads);
  if (!export_options.checkpoint.empty()) {
    ExportModel(*config, export_options);
    std::cerr << "nmtrain: exported " << export_options.checkpoint << " to " << export_options.out_dir
              << "\n";
    return kExitOk;
  }
  if (validate_only) {
    const int described = DescribeRun(*config, std::cout);
    if (described != kExitOk) return described;
    absl::StatusOr<DataPipeline> pipeline = ResolveDataPipeline(*config);
    if (!pipeline.ok()) return Usage(std::string(pipeline.status().message()));
    std::cout << "image transforms:\n" << DescribeDataPipeline(*pipeline);
    return kExitOk;
  }
  if (absl::Status hold = ReadHoldFromEnvironment(&options.test); !hold.ok()) {
    return Usage(std::string(hold.message()));
  }
  std::signal(SIGTERM, OnTerminate);
  std::signal(SIGINT, OnTerminate);
  options.stop = &g_stop;
  return RunTraining(*config, options);
}

}  // namespace
}  // namespace nmsparse

int main(int argc, char** argv) {
  using namespace nmsparse;
  try {
    return Main(argc, argv);
  } catch (const TrainerError& e) {
    std::cerr << "nmtrain: " << e.what() << "\n";
    return e.exit_code();
  } catch (const DistributedError& e) {
    std::cerr << "nmtrain: distributed failure: " << e.what() << "\n";
    return kExitDistributed;
  } catch (const DataReadError& e) {
    std::cerr << "nmtrain: data not usable: " << e.what() << "\n";
    return kExitData;
  } catch (const std::invalid_argument& e) {
    std::cerr << "nmtrain: bad spec: " << e.what() << "\n";
    return kExitUsage;
  } catch (const c10::Error& e) {
    std::cerr << "nmtrain: torch error: " << e.what_without_backtrace() << "\n";
    return kExitTraining;
  } catch (const std::exception& e) {
    std::cerr << "nmtrain: training failed: " << e.what() << "\n";
    return kExitTraining;
  }
}
