// The sweep file's two policy blocks, `early_stopping` (ASHA) and `search` (TPE), and the key tables of the
// sweep file: the parser, the JSON Schema and docs/sweeps.md's key tables all come from them, so a key is
// added in one place.
//
//   early_stopping: {policy: asha, metric: top1, mode: max, resource: epoch, min_resource: 1,
//                    reduction_factor: 3, max_resource: 9}
//   search: {algorithm: tpe, budget: 20, seed: 1, metric: top1, mode: max, parallel: 2, n_startup: 4,
//            gamma: 0.25, n_candidates: 24}
#ifndef NMSPARSE_SCHEMAS_SWEEP_BLOCKS_H_
#define NMSPARSE_SCHEMAS_SWEEP_BLOCKS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nmsparse/v1/sweep.pb.h"
#include "schemas/spec_keys.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

// The key tables of a sweep file (schemas/spec_keys.h): its top-level keys, and the keys of early_stopping
// and search with their ranges, defaults and docs; and their names, for messages:
const KeyTable<v1::SweepSpec>& SweepKeyTable();
const KeyTable<v1::EarlyStopping>& EarlyStoppingKeyTable();
const KeyTable<v1::Search>& SearchKeyTable();
const std::vector<std::string>& SweepKeys();
const std::vector<std::string>& EarlyStoppingKeys();
const std::vector<std::string>& SearchKeys();

// Reads the sweep file's scalar keys (name, num_samples, seed, priority, ...) into `sweep`.
absl::Status ReadSweepScalars(const YAML::Node& node, v1::SweepSpec* sweep);

// Reads the block into `out`; errors name "line L: early_stopping.KEY: value V ...". Defaults are filled in
// (mode: the metric's direction, resource epoch, min_resource 1, reduction_factor 3, max_resource =
// base_epochs).
absl::Status ParseEarlyStopping(const YAML::Node& node, uint32_t base_epochs, v1::EarlyStopping* out);
// Reads search into sweep->search and checks it against the sweep's axes (CheckSearch).
absl::Status ParseSearch(const YAML::Node& node, v1::SweepSpec* sweep);

// The checks that do not need the file: what the coordinator applies to a SweepSpec from the wire too.
// InvalidArgument "early_stopping.KEY: value V ..." / "search.KEY: ...". An unset block is OK.
// CheckSearch also bounds the search (schemas/limits.h): budget, parallel, n_startup, n_candidates, the
// number of random axes and of choices per axis, so that no proposal can cost more than they allow.
absl::Status CheckEarlyStopping(const v1::SweepSpec& sweep);
absl::Status CheckSearch(const v1::SweepSpec& sweep);

// Sets each block's unset `mode` to its metric's declared direction (schemas/metric_objective.h), as the
// parser does; InvalidArgument "early_stopping.metric: metric 'acc' has no declared direction ...; say
// early_stopping.mode: max or min" for a metric without one. nmserver applies it to a SweepSpec from the
// wire.
absl::Status FillObjectiveModes(v1::SweepSpec* sweep);

// A random axis's range, the one check of both the sweep parser and nmserver: min and max finite, min <= max,
// min > 0 with log, an integer in [min, max] with integer. An axis of choices passes. InvalidArgument
// "random.KEY.max: value 1 is out of range: must be >= 2" (the parser adds the line).
absl::Status CheckRandomAxis(const v1::RandomAxis& axis);
absl::Status CheckRandomAxes(const v1::SweepSpec& sweep);

// The resource at which no rung is taken: max_resource, or the base's epochs when it is 0.
uint32_t AshaMaxResource(const v1::SweepSpec& sweep);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SWEEP_BLOCKS_H_
