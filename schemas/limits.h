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
// schedule.log_points: step lines a run spreads over its steps, well under what nmserver stores of it.
inline constexpr int64_t kMaxLogPoints = 10'000;
// Bytes of one log line as nmworker sends it and nmserver stores it; longer lines are cut (CutLogLine).
inline constexpr int64_t kMaxLogLineBytes = 4 << 10;

// A worker's metric point (the metric-line contract, server/api/metric_intake.h): its epoch, and its step,
// the largest integer a double holds exactly (nmctl, the report and the dashboard read steps as numbers).
inline constexpr int64_t kMaxMetricEpoch = 1'000'000;
inline constexpr int64_t kMaxMetricStep = int64_t{1} << 53;

// Fields of the requests nmserver accepts. schemas/request_bounds.h applies them to every string, bytes,
// repeated and map field of every request by reflection; a field its table does not name gets the defaults
// kMaxStringBytes and kMaxRepeatedCount, so a field added to the protos later is bounded too.
// A name, label, key path, metric name, glob or host: one line a person reads in a table.
inline constexpr int64_t kMaxNameBytes = 256;
// A sweep's idempotency key (nmctl's are 64 hex digits).
inline constexpr int64_t kMaxIdempotencyKeyBytes = 128;
// A file or directory path (Linux's PATH_MAX).
inline constexpr int64_t kMaxPathBytes = 4 << 10;
// The YAML text of one override value: a grid value, a random choice, a fork's KEY=VALUE.
inline constexpr int64_t kMaxValueTextBytes = 8 << 10;
// A run's end message from its worker (a rank's exit and its stderr's tail); a longer one is cut (CutText).
inline constexpr int64_t kMaxRunMessageBytes = 8 << 10;
// Any other string or bytes field, and a message's unknown fields together.
inline constexpr int64_t kMaxStringBytes = 4 << 10;
// Entries of any other repeated or map field.
inline constexpr int64_t kMaxRepeatedCount = 1 << 10;
// Values of one grid axis; choices of one random axis.
inline constexpr int64_t kMaxAxisValues = 100'000;
// One string of a spec (a name, a path, a glob): the spec travels as one YAML text (bounded as a spec file),
// and each of its strings is bounded by the key table that reads it (schemas/spec_keys.h).
inline constexpr int64_t kMaxSpecStringBytes = kMaxPathBytes;
// A sweep spec as SubmitSweep carries it. Larger than kMaxSpecFileBytes on purpose: in the wire form each
// value of a scalar axis repeats the axis's key path, so a 1 MiB file of 100,000 values can take about 6 MB.
inline constexpr int64_t kMaxSweepSpecBytes = 8 << 20;

// A search block (schemas/sweep_blocks.h): what one proposal may cost is bounded by these.
inline constexpr int64_t kMaxSearchBudget = 10'000;
inline constexpr int64_t kMaxSearchParallel = 1'000;
inline constexpr int64_t kMaxSearchStartup = 1'000;
inline constexpr int64_t kMaxSearchCandidates = 1'000;
inline constexpr int64_t kMaxSearchAxes = 32;
inline constexpr int64_t kMaxSearchChoices = 1'000;

// Loader threads of one run (data.workers): a node's cores, with room.
inline constexpr int64_t kMaxLoaderThreads = 256;

// A spec's model (schemas/model_resolution.h), so that a typo in model_kwargs cannot ask for a
// 10^12-parameter model: its widest layer, its blocks, its patch tokens (checked first, they keep the
// counts below far from overflow), its parameters, and its forward FLOPs per image (bounded from above as
// 2 x parameters x tokens + attention: ForwardFlopsBound in schemas/model_resolution.h).
inline constexpr int64_t kMaxModelWidth = 1 << 16;
inline constexpr int64_t kMaxModelBlocks = 1 << 10;
inline constexpr int64_t kMaxModelTokens = 1 << 20;
inline constexpr int64_t kMaxModelParameters = 10'000'000'000;
inline constexpr int64_t kMaxModelFlopsPerImage = 1'000'000'000'000'000;
// Boxes random erasing may cut from one image (data.re_count): each is a pass over the image.
inline constexpr int64_t kMaxEraseCount = 64;

// A run's exported model (nmctl export-model): the bytes of all its files together, sized for the largest
// model a spec may ask for (4 bytes per fp32 parameter) with room for the JSON files, and the chunks they
// travel in from the worker through the coordinator to nmctl, far below the request and response limits.
inline constexpr int64_t kMaxModelExportBytes = 4 * kMaxModelParameters + (64 << 20);
inline constexpr int64_t kModelExportChunkBytes = 1 << 20;

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

// The dashboard's run tables (GET /api/sweeps/S/runs): rows per page (?limit=) and the text filter (?q=).
inline constexpr int64_t kMaxDashboardPageRuns = 500;
inline constexpr int64_t kMaxDashboardFilterBytes = 256;

// A page of ListRunCurves (a sweep's runs with their metric points, for reports and the dashboard's figures):
// runs, points, and bytes of stored points. A request may ask for less; 32 MiB keeps a page far below
// kMaxResponseBytes whatever a point holds.
inline constexpr int64_t kMaxCurvePageRuns = 1'000;
inline constexpr int64_t kMaxCurvePagePoints = 100'000;
inline constexpr int64_t kMaxCurvePagePointBytes = 32 << 20;

// `text` when it fits `max_bytes`; else its start, cut back to a UTF-8 character boundary, followed by
// " [N bytes cut]", all within `max_bytes` (so cutting again changes nothing) when it has room for the
// marker.
std::string CutText(std::string_view text, int64_t max_bytes);

// CutText(text, kMaxLogLineBytes).
std::string CutLogLine(std::string_view text);

}  // namespace nmsparse::limits

#endif  // NMSPARSE_SCHEMAS_LIMITS_H_
