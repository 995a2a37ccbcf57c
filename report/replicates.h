// Seeds as replicates (issue 40): runs of a sweep that differ only in a replicate axis are repeats of one
// configuration, so the figures and the search views aggregate them (mean and sample std over the repeats)
// instead of treating the seed as a hyperparameter. A replicate axis is a grid axis whose every value sets
// only `seed` (compare_pivot.h: IsReplicateAxis), or a random axis over `seed`.
#ifndef NMSPARSE_REPORT_REPLICATES_H_
#define NMSPARSE_REPORT_REPLICATES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::report {

// The names of the sweep's replicate axes (grid axes by name, random axes by key), in spec order.
std::vector<std::string> ReplicateAxes(const v1::SweepSpec& spec);

// A run's configuration: its labels in axis order without the replicate axes, numbers as nmctl shows them
// ("recipe=srste nm=1:8"); empty for a run whose only labels are replicates.
std::string ConfigurationOf(const v1::Run& run, const std::vector<std::string>& replicate_axes);

// Runs grouped by configuration, in order of first appearance; `members` index the input. Without replicate
// axes each run is a configuration of its own (runs built without labels are not repeats).
struct Configuration {
  std::string name;
  std::vector<size_t> members;
};
std::vector<Configuration> GroupByConfiguration(const std::vector<const v1::Run*>& runs,
                                                const std::vector<std::string>& replicate_axes);

// True when some configuration has two or more runs: the figures draw groups, not runs.
bool HasReplicates(const std::vector<Configuration>& configurations);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_REPLICATES_H_
