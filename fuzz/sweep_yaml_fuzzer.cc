// Fuzzes the sweep-file parser (base spec, grid and random axes, options) and the run count computed from its
// result before expanding: whatever parses has a count of at least one run.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "schemas/sweep.h"
#include "schemas/sweep_size.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  const absl::StatusOr<nmsparse::v1::SweepSpec> sweep =
      nmsparse::ParseSweepYaml(text, "fuzz.yaml", &warnings);
  if (!sweep.ok()) {
    FUZZ_CHECK(!sweep.status().message().empty(), "an error without a message");
    return 0;
  }
  FUZZ_CHECK(nmsparse::SweepRunCount(*sweep) >= 1, sweep->DebugString());
  return 0;
}
