#include "worker/trainer/device/blas_core_choice.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

constexpr CpuFeatures Cpu(bool avx, bool avx2, bool fma, bool avx512, bool amd) {
  CpuFeatures cpu;
  cpu.avx = avx, cpu.avx2 = avx2, cpu.fma = fma, cpu.avx512 = avx512, cpu.amd = amd;
  return cpu;
}

constexpr CpuFeatures kSse = Cpu(false, false, false, false, false);
constexpr CpuFeatures kAvxOnly = Cpu(true, false, false, false, false);
constexpr CpuFeatures kIntelAvx2 = Cpu(true, true, true, false, false);
constexpr CpuFeatures kAmdAvx2 = Cpu(true, true, true, false, true);
constexpr CpuFeatures kAvx512 = Cpu(true, true, true, true, false);
constexpr CpuFeatures kAmdAvx512 = Cpu(true, true, true, true, true);

TEST(BlasCoreChoiceTest, AsksForTheWidestCoreTheCpuRuns) {
  EXPECT_EQ(OpenBlasCoreFor(kAvx512), "SkylakeX");
  EXPECT_EQ(OpenBlasCoreFor(kAmdAvx512), "SkylakeX");  // Zen 4: OpenBLAS runs its SkylakeX kernels there.
  EXPECT_EQ(OpenBlasCoreFor(kIntelAvx2), "Haswell");
  EXPECT_EQ(OpenBlasCoreFor(kAmdAvx2), "Zen");
  EXPECT_EQ(OpenBlasCoreFor(kAvxOnly), "");
  EXPECT_EQ(OpenBlasCoreFor(kSse), "");
  // AVX2 without FMA (no such x86 CPU ships, but a hypervisor may mask it): Haswell's kernels need FMA.
  EXPECT_EQ(OpenBlasCoreFor(Cpu(true, true, false, false, false)), "");
}

TEST(BlasCoreChoiceTest, NamesTheIsa) {
  EXPECT_EQ(CpuIsaName(WidestIsa(kAvx512)), "avx512");
  EXPECT_EQ(CpuIsaName(WidestIsa(kAmdAvx2)), "avx2");
  EXPECT_EQ(CpuIsaName(WidestIsa(kAvxOnly)), "avx");
  EXPECT_EQ(CpuIsaName(WidestIsa(kSse)), "sse");
}

TEST(BlasCoreChoiceTest, AGenericCoreOnAnAvx2CpuIsAFallback) {
  EXPECT_TRUE(IsFallbackCore("Prescott", kAvx512));  // Debian's 0.3.21 on an unknown Xeon model.
  EXPECT_TRUE(IsFallbackCore("PRESCOTT", kIntelAvx2));
  EXPECT_TRUE(IsFallbackCore("Sandybridge", kAmdAvx2));
  EXPECT_TRUE(IsFallbackCore("Nehalem", kIntelAvx2));
}

TEST(BlasCoreChoiceTest, AFittingOrUnknownCoreIsNot) {
  EXPECT_FALSE(IsFallbackCore("SkylakeX", kAvx512));
  EXPECT_FALSE(IsFallbackCore("Cooperlake", kAvx512));
  EXPECT_FALSE(IsFallbackCore("Zen", kAmdAvx512));  // AVX2 kernels: not the generic fall-back; left alone.
  EXPECT_FALSE(IsFallbackCore("Haswell", kAvx512));
  EXPECT_FALSE(IsFallbackCore("Prescott", kAvxOnly));  // Nothing better to ask for.
  EXPECT_FALSE(IsFallbackCore("Neoversev1", kAvx512));
  EXPECT_FALSE(IsFallbackCore("", kAvx512));
}

}  // namespace
}  // namespace nmsparse
