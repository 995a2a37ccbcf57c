// nmtrain: trains one run of an experiment spec on this machine's ranks (docs/nmtrain.md).
//
//   nmtrain --spec run.yaml --out DIR [--resume] [--threads N] [--loader-threads N] [--device
//   cpu|cuda|cuda:K]
//           [--precision fp32|bf16|fp16] [--timeout-s S] [--stop-after-steps N] [--validate-only] [--help]
//           [--version]
//   nmtrain --export CHECKPOINT -o DIR [--weights final|ema] [--dtype fp32|bf16] [--spec FILE]
//
// Rank 0 prints one JSON object per line on stdout (epoch, step and final metrics); progress goes to stderr.
// Exit codes: 0 ok, 2 usage or bad spec, 3 data error, 4 training error, 5 distributed failure, 143 SIGTERM.
#include <c10/util/Exception.h>
#include <malloc.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/version.h"
#include "contract/run_directory.h"
#include "contract/trainer_flags.h"
#include "schemas/data_pipeline.h"
#include "schemas/experiment_config.h"
#include "worker/trainer/blas_check.h"
#include "worker/trainer/data/transformed_dataset.h"
#include "worker/trainer/distributed.h"
#include "worker/trainer/interop/model_export.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {
namespace {

std::atomic<bool> g_stop{false};

void OnTerminate(int) { g_stop.store(true); }

constexpr char kUsageText[] =
    "usage: nmtrain --spec FILE --out DIR [--resume] [--threads N] [--loader-threads N] [--device D]\n"
    "               [--precision P] [--timeout-s S] [--stop-after-steps N] [--validate-only]\n"
    "       nmtrain --export CHECKPOINT -o DIR [--weights final|ema] [--dtype fp32|bf16] [--spec FILE]\n"
    "  --spec FILE       experiment spec (YAML), or a flat timm reference config\n"
    "  --out DIR         checkpoint and spec.yaml go here (rank 0)\n"
    "  --resume          continue from DIR/checkpoint.pt when present (starts fresh when absent)\n"
    "  --init-from PDIR  a fork: start from PDIR/checkpoint.pt (another run's) when DIR has none yet\n"
    "  --threads N       intra-op threads per rank (default: the spec's resources.cpu_threads)\n"
    "  --loader-threads N  threads building batches ahead of training (default: on a GPU\n"
    "                    max(2, resources.cpu_threads), on the CPU 0: batches built in the loop)\n"
    "  --device D        cpu (default), cuda (GPU LOCAL_RANK among the visible ones) or cuda:K; NCCL\n"
    "                    between ranks in CUDA builds; a missing GPU is an error, never a CPU fall-back\n"
    "  --precision P     fp32, bf16 or fp16 (autocast of forward passes; fp16 with loss scaling);\n"
    "                    replaces the spec's\n"
    "                    resources.precision, also in DIR/spec.yaml\n"
    "  --timeout-s S     rendezvous / collective timeout in seconds (default 60)\n"
    "  --stop-after-steps N  stop with a checkpoint once N optimizer steps are done in total, exit 143 as\n"
    "                    after SIGTERM (--resume continues as if never stopped)\n"
    "  --validate-only   print the model, its parameter count, every sparse layer's N:M (dynamic\n"
    "                    sparsity: every parameter's algorithm and sparsity) and the image transforms; do\n"
    "                    not train\n"
    "  --version         print nmtrain's release and exit\n"
    "  --export CKPT     write the run's deployable model (every sparse layer hard-masked at its target\n"
    "                    N:M) in timm's format to -o DIR: model.safetensors, config.json, sparsity.json,\n"
    "                    README.md (docs/interop.md); --spec defaults to the spec.yaml beside CKPT\n"
    "  --weights W       final (default) or ema (the model EMA's weights); --dtype fp32 (default) or bf16\n"
    "ranks: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (torchrun's variables)\n"
    "BLAS: where OpenBLAS fell back to a generic core on a CPU with AVX2 or AVX-512, nmtrain re-executes\n"
    "      itself once with OPENBLAS_CORETYPE set; a value the user set is kept (docs/nmtrain.md \"BLAS\")\n"
    "tests: NMTRAIN_HOLD_FILE=F with NMTRAIN_HOLD_AFTER_EPOCHS=N (or _STEPS=N) waits after N epochs (steps) "
    "while F exists;\n"
    "       NMTRAIN_TEST_BLAS_CORE=C takes C for OpenBLAS's own choice of core\n"
    "exit codes: 0 ok, 2 usage/bad spec, 3 data error, 4 training error, 5 distributed failure, 143 "
    "SIGTERM\n";

// The spec nmtrain rewrote into the run directory that holds `checkpoint`.
std::string SpecBesideCheckpoint(const std::string& checkpoint) {
  const size_t slash = checkpoint.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : checkpoint.substr(0, slash);
  return dir + "/" + contract::kSpecFileName;
}

int Usage(const std::string& why) {
  std::cerr << "nmtrain: " << why << "\n" << kUsageText;
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
  std::string spec_path;
  TrainerOptions options;
  bool validate_only = false;
  int threads = 0;
  std::string precision;
  ExportOptions export_options;
  std::string weights = "final", dtype = "fp32";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsageText;
      return kExitOk;
    } else if (arg == "--version") {
      std::cout << VersionText("nmtrain");
      return kExitOk;
    } else if (arg == contract::kSpecFlag) {
      if (!value(&spec_path)) return Usage("--spec needs a file");
    } else if (arg == contract::kOutFlag) {
      if (!value(&options.out_dir)) return Usage("--out needs a directory");
    } else if (arg == contract::kResumeFlag) {
      options.resume = true;
    } else if (arg == contract::kInitFromFlag) {
      if (!value(&options.init_from)) return Usage("--init-from needs the parent run's directory");
    } else if (arg == contract::kExportFlag) {
      if (!value(&export_options.checkpoint)) return Usage("--export needs a checkpoint file");
    } else if (arg == contract::kExportOutFlag) {
      if (!value(&export_options.out_dir)) return Usage("-o needs a directory");
    } else if (arg == contract::kExportWeightsFlag) {
      if (!value(&weights) || (weights != "final" && weights != "ema"))
        return Usage("--weights: value '" + weights + "' is not one of final, ema");
    } else if (arg == contract::kExportDtypeFlag) {
      if (!value(&dtype) || (dtype != "fp32" && dtype != "bf16"))
        return Usage("--dtype: value '" + dtype + "' is not one of fp32, bf16");
    } else if (arg == "--validate-only") {
      validate_only = true;
    } else if (arg == contract::kThreadsFlag) {
      if (!value(&v) || !absl::SimpleAtoi(v, &threads) || threads < 1) return Usage("--threads needs N >= 1");
    } else if (arg == "--loader-threads") {
      if (!value(&v) || !absl::SimpleAtoi(v, &options.loader_threads) || options.loader_threads < 0)
        return Usage("--loader-threads needs N >= 0");
    } else if (arg == contract::kDeviceFlag) {
      if (!value(&options.device)) return Usage("--device needs cpu or cuda");
    } else if (arg == "--precision") {
      if (!value(&v)) return Usage("--precision needs fp32, bf16 or fp16");
      precision = absl::AsciiStrToLower(v);
      if (precision != "fp32" && precision != "bf16" && precision != "fp16")
        return Usage("--precision: value '" + v + "' is not one of fp32, bf16, fp16");
    } else if (arg == "--stop-after-steps") {
      if (!value(&v) || !absl::SimpleAtoi(v, &options.stop_after_steps) || options.stop_after_steps < 1)
        return Usage("--stop-after-steps needs N >= 1");
    } else if (arg == "--timeout-s") {
      int seconds = 0;
      if (!value(&v) || !absl::SimpleAtoi(v, &seconds) || seconds < 1)
        return Usage("--timeout-s needs S >= 1");
      options.timeout = std::chrono::seconds(seconds);
    } else {
      return Usage("unknown argument '" + arg + "'");
    }
  }
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
  if (const char* hold = std::getenv("NMTRAIN_HOLD_FILE"); hold != nullptr && *hold != '\0') {
    const char* epochs = std::getenv("NMTRAIN_HOLD_AFTER_EPOCHS");
    const char* steps = std::getenv("NMTRAIN_HOLD_AFTER_STEPS");
    const bool by_epochs = epochs != nullptr && absl::SimpleAtoi(epochs, &options.hold_after_epochs) &&
                           options.hold_after_epochs >= 1;
    const bool by_steps = steps != nullptr && absl::SimpleAtoi(steps, &options.hold_after_steps) &&
                          options.hold_after_steps >= 1;
    if (!by_epochs && !by_steps)
      return Usage("NMTRAIN_HOLD_FILE needs NMTRAIN_HOLD_AFTER_EPOCHS=N or NMTRAIN_HOLD_AFTER_STEPS=N >= 1");
    options.hold_file = hold;
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
