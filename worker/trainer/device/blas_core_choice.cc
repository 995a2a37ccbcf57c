#include "worker/trainer/device/blas_core_choice.h"

#include <array>
#include <utility>

#include "absl/strings/ascii.h"

namespace nmsparse {
namespace {

// OpenBLAS 0.3.x x86-64 core names (driver/others/dynamic.c's corename[]) by the widest ISA their kernels
// use.
constexpr std::array<std::pair<std::string_view, CpuIsa>, 22> kCoreIsa = {{
    {"prescott", CpuIsa::kSse},      {"core2", CpuIsa::kSse},
    {"penryn", CpuIsa::kSse},        {"dunnington", CpuIsa::kSse},
    {"nehalem", CpuIsa::kSse},       {"atom", CpuIsa::kSse},
    {"opteron", CpuIsa::kSse},       {"opteron_sse3", CpuIsa::kSse},
    {"barcelona", CpuIsa::kSse},     {"nano", CpuIsa::kSse},
    {"bobcat", CpuIsa::kSse},        {"katmai", CpuIsa::kSse},
    {"sandybridge", CpuIsa::kAvx},   {"bulldozer", CpuIsa::kAvx},
    {"piledriver", CpuIsa::kAvx},    {"steamroller", CpuIsa::kAvx},
    {"excavator", CpuIsa::kAvx},     {"haswell", CpuIsa::kAvx2},
    {"zen", CpuIsa::kAvx2},          {"skylakex", CpuIsa::kAvx512},
    {"cooperlake", CpuIsa::kAvx512}, {"sapphirerapids", CpuIsa::kAvx512},
}};

}  // namespace

std::string_view CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx:
      return "avx";
    case CpuIsa::kSse:
      return "sse";
    case CpuIsa::kUnknown:
      break;
  }
  return "unknown";
}

CpuIsa WidestIsa(const CpuFeatures& cpu) {
  if (cpu.avx512 && cpu.avx2 && cpu.fma) return CpuIsa::kAvx512;
  if (cpu.avx2 && cpu.fma) return CpuIsa::kAvx2;
  if (cpu.avx) return CpuIsa::kAvx;
  return CpuIsa::kSse;
}

CpuIsa IsaOfOpenBlasCore(std::string_view core) {
  const std::string lower = absl::AsciiStrToLower(std::string(core));
  for (const auto& [name, isa] : kCoreIsa) {
    if (lower == name) return isa;
  }
  return CpuIsa::kUnknown;
}

std::string OpenBlasCoreFor(const CpuFeatures& cpu) {
  switch (WidestIsa(cpu)) {
    case CpuIsa::kAvx512:
      return "SkylakeX";
    case CpuIsa::kAvx2:
      return cpu.amd ? "Zen" : "Haswell";
    default:
      return "";
  }
}

bool IsFallbackCore(std::string_view core, const CpuFeatures& cpu) {
  const CpuIsa core_isa = IsaOfOpenBlasCore(core);
  return core_isa != CpuIsa::kUnknown && core_isa < CpuIsa::kAvx2 && WidestIsa(cpu) >= CpuIsa::kAvx2;
}

}  // namespace nmsparse
