#include "worker/trainer/device/blas_check.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "worker/trainer/device/blas_core_choice.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace nmsparse {
namespace {

constexpr char kCoreTypeVariable[] = "OPENBLAS_CORETYPE";

// OpenBLAS's introspection, looked up at run time: a build whose BLAS is MKL or another library has none,
// and must still link and run.
const char* OpenBlasString(const char* symbol) {
  using Getter = char* (*)();
  auto getter = reinterpret_cast<Getter>(dlsym(RTLD_DEFAULT, symbol));
  return getter != nullptr ? getter() : nullptr;
}

bool HasValue(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0';
}

CpuFeatures DetectCpu() {
  CpuFeatures cpu;
#if defined(__x86_64__)
  __builtin_cpu_init();
  // libgcc also checks XCR0, so these are false where the OS does not save the wider registers.
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

std::string CpuIsaText(const CpuFeatures& cpu) {
#if defined(__x86_64__)
  return std::string(CpuIsaName(WidestIsa(cpu)));
#else
  (void)cpu;
  return "unknown";
#endif
}

std::string CpuModel() {
#if defined(__x86_64__)
  unsigned int regs[12] = {};
  for (unsigned int i = 0; i < 3; ++i) {
    if (!__get_cpuid(0x80000002 + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2], &regs[4 * i + 3]))
      return "unknown";
  }
  char brand[sizeof(regs) + 1] = {};
  std::memcpy(brand, regs, sizeof(regs));
  return std::string(absl::StripAsciiWhitespace(brand));
#else
  return "unknown";
#endif
}

// "OpenBLAS 0.3.21" from "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...".
std::string OpenBlasVersion(const char* config) {
  const std::vector<std::string> words = absl::StrSplit(config, ' ', absl::SkipEmpty());
  return words.size() >= 2 ? absl::StrCat(words[0], " ", words[1]) : std::string(config);
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// The file whose cblas_sgemm this process calls (the fused kernels' direct calls, kernels/blas_gemm.h): the
// same global lookup the dynamic linker did for them. Empty without one.
std::string SgemmLibraryPath() {
  void* sgemm = dlsym(RTLD_DEFAULT, "cblas_sgemm");
  Dl_info info;
  if (sgemm == nullptr || dladdr(sgemm, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

// The core OpenBLAS chose, or the test's stand-in before any correction.
std::string ChosenCore(const char* corename) {
  if (!HasValue(kCoreTypeVariable) && !HasValue(kBlasCorrectedFromVariable) &&
      HasValue(kTestBlasCoreVariable))
    return std::getenv(kTestBlasCoreVariable);
  return corename != nullptr ? corename : "";
}

}  // namespace

void ReexecForFittingBlasCore(char** argv) {
  if (HasValue(kCoreTypeVariable) || HasValue(kBlasCorrectedFromVariable)) return;
  const char* config = OpenBlasString("openblas_get_config");
  const std::string core = ChosenCore(OpenBlasString("openblas_get_corename"));
  const CpuFeatures cpu = DetectCpu();
  if (config == nullptr || !absl::StrContains(config, "DYNAMIC_ARCH") || !IsFallbackCore(core, cpu)) return;
  setenv(kCoreTypeVariable, OpenBlasCoreFor(cpu).c_str(), 1);
  setenv(kBlasCorrectedFromVariable, core.c_str(), 1);
  execv("/proc/self/exe", argv);
  // Still here: the exec failed; run on with the fall-back, and InspectBlas warns.
  unsetenv(kCoreTypeVariable);
  unsetenv(kBlasCorrectedFromVariable);
}

BlasFacts InspectBlas() {
  BlasFacts facts;
  const CpuFeatures cpu = DetectCpu();
  facts.cpu_isa = CpuIsaText(cpu);
  facts.cpu_model = CpuModel();
  const std::string gemm_library = SgemmLibraryPath();
  const char* config = OpenBlasString("openblas_get_config");
  if (config != nullptr) {
    facts.library = OpenBlasVersion(config);
    if (!gemm_library.empty()) absl::StrAppend(&facts.library, " (", BaseName(gemm_library), ")");
  } else {
    facts.library = gemm_library.empty() ? "none" : BaseName(gemm_library);
  }
  const char* corename = OpenBlasString("openblas_get_corename");
  facts.core = corename != nullptr ? corename : "n/a";
  if (corename == nullptr) {
    facts.how = "not reported by this BLAS";
    return facts;
  }
  const bool fallback = IsFallbackCore(corename, cpu);
  const std::string wanted = OpenBlasCoreFor(cpu);
  if (HasValue(kBlasCorrectedFromVariable)) {
    facts.how = absl::StrCat("corrected from ", std::getenv(kBlasCorrectedFromVariable));
    if (fallback) {
      facts.warning = absl::StrCat("OpenBLAS kept core ", corename, " although nmtrain asked for ", wanted);
    }
  } else if (HasValue(kCoreTypeVariable)) {
    facts.how = absl::StrCat(kCoreTypeVariable, "=", std::getenv(kCoreTypeVariable), " set by the user");
    if (fallback) {
      facts.warning =
          absl::StrCat("core ", corename, " is below this CPU's ", facts.cpu_isa, "; ", kCoreTypeVariable,
                       " was set by the user, so it stays (", wanted, " would be faster)");
    }
  } else {
    facts.how = "chosen by OpenBLAS";
    if (fallback) {
      facts.warning = absl::StrCat("OpenBLAS fell back to core ", corename, " on this ", facts.cpu_isa,
                                   " CPU and nmtrain could not correct it (",
                                   config != nullptr && absl::StrContains(config, "DYNAMIC_ARCH")
                                       ? "re-executing itself failed"
                                       : "this OpenBLAS has one core only: built without DYNAMIC_ARCH",
                                   "); training runs at a fraction of the CPU's speed");
    }
  }
  return facts;
}

std::string DescribeBlas(const BlasFacts& facts) {
  return absl::StrCat("BLAS ", facts.library, ", core ", facts.core, " (", facts.how, "), CPU ",
                      facts.cpu_model, " (", facts.cpu_isa, ")");
}

}  // namespace nmsparse
