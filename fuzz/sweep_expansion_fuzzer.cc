// Fuzzes sweep expansion: sweep files that parse and count at most kMaxRuns runs (so that one input stays
// fast) are expanded, and the expansion must give exactly the counted number of runs, each with a content
// hash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "schemas/sweep.h"
#include "schemas/sweep_size.h"

namespace {
constexpr int64_t kMaxRuns = 64;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<nmsparse::v1::SweepSpec> sweep = nmsparse::ParseSweepYaml(text, "fuzz.yaml");
  if (!sweep.ok() || !nmsparse::CheckSweepRunCount(*sweep, kMaxRuns, "fuzz").ok()) return 0;
  const absl::StatusOr<std::vector<nmsparse::ResolvedRun>> runs = nmsparse::ExpandSweep(*sweep);
  if (!runs.ok()) {
    FUZZ_CHECK(!runs.status().message().empty(), "an error without a message");
    return 0;
  }
  FUZZ_CHECK(static_cast<int64_t>(runs->size()) == nmsparse::SweepRunCount(*sweep), sweep->DebugString());
  for (const nmsparse::ResolvedRun& run : *runs) FUZZ_CHECK(run.content_hash.size() == 64, run.content_hash);
  return 0;
}
