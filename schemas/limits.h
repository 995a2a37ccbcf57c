// Every bound nmsparse puts on its inputs, declared once. nmctl, nmserver and nmworker take their defaults
// from here, and limits_test checks that docs/reliability.md lists each one with its default and flag.
#ifndef NMSPARSE_SCHEMAS_LIMITS_H_
#define NMSPARSE_SCHEMAS_LIMITS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nmsparse::limits {

// Runs one sweep may expand to (grid points x random samples), checked before expanding.
inline constexpr int64_t kDefaultMaxRunsPerSweep = 100'000;
// Size of a spec file (sweep, experiment or base_file), checked before reading it.
inline constexpr int64_t kMaxSpecFileBytes = 1 << 20;
// gRPC messages towards nmserver (SubmitSweep, worker reports) and from it (ListRuns, Export, GetRun).
inline constexpr int kMaxRequestBytes = 64 << 20;
inline constexpr int kMaxResponseBytes = 256 << 20;
// What nmserver stores per run; past these, lines and points are dropped and counted.
inline constexpr int64_t kDefaultMaxLogLinesPerRun = 100'000;
inline constexpr int64_t kDefaultMaxMetricPointsPerRun = 100'000;
// Bytes of one log line as nmworker sends it and nmserver stores it; longer lines are cut (CutLogLine).
inline constexpr int64_t kMaxLogLineBytes = 4 << 10;

// A limit as docs/reliability.md lists it.
struct Limit {
  std::string name;  // What is bounded, e.g. "runs per sweep".
  int64_t value = 0;
  std::string flag;  // How to change it ("nmserver --max_runs_per_sweep"), or "" when fixed.
};

// Every limit above, in the order of the docs' table.
const std::vector<Limit>& AllLimits();

// 10000000 -> "10,000,000": how counts and sizes are written in limit errors and docs.
std::string FormatCount(int64_t value);

// `text` when it fits kMaxLogLineBytes; else its first kMaxLogLineBytes bytes, cut back to a UTF-8 character
// boundary, followed by " [N bytes cut]".
std::string CutLogLine(std::string_view text);

}  // namespace nmsparse::limits

#endif  // NMSPARSE_SCHEMAS_LIMITS_H_
