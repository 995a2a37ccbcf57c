// The metric protocol between nmtrain and the worker agent (docs/nmtrain.md): one flat JSON object per line
// on rank 0's stdout, {"kind": <kind>, "epoch": E, "step": S, <name>: number | string, ...}. The kind is
// also a stored metric point's kind (proto MetricPoint.kind), which the coordinator, nmctl and the report
// read. Standard library only, like all of contract/.
#ifndef NMSPARSE_CONTRACT_METRIC_LINE_H_
#define NMSPARSE_CONTRACT_METRIC_LINE_H_

namespace nmsparse::contract {

// The fields every line has.
constexpr char kKindKey[] = "kind";
constexpr char kEpochKey[] = "epoch";  // Epochs completed before this line (0-based epoch of a step line).
constexpr char kStepKey[] = "step";    // Optimizer steps done in total.

// Kinds.
constexpr char kKindEpoch[] = "epoch";  // After each epoch's evaluation.
constexpr char kKindStep[] = "step";    // Every spec'd number of steps, during an epoch.
constexpr char kKindFinal[] = "final";  // Once, at the end: its numbers are the run's final metrics.
// Steps done, whatever log_every_steps says: only epoch and step, from the step count the loop has on the
// host (no device read), at the first step and then at most every kProgressIntervalSeconds of wall time, so
// that follow and watch show progress before an epoch ends.
constexpr char kKindProgress[] = "progress";
constexpr double kProgressIntervalSeconds = 3.0;

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_METRIC_LINE_H_
