// Sweeps: a base experiment spec and axes, in a YAML file that nmctl reads and sends as a v1.SweepSpec (the
// base as YAML text, the axes and blocks as messages); the coordinator expands it into runs (ExpandSweep).
// The format (schemas/sweep.schema.json):
//
//   name: quick
//   base: {model: {name: vit_micro_patch4_28}, ...}   # or base_file: micro.yaml (relative to the sweep file)
//   grid:                                             # cartesian product, first axis slowest
//     sparsity.m_sparsity: [4, 8, 16]                 # key-path axis: label = value
//     recipe:                                         # labelled axis: label -> overrides
//       dense: {sparsity.sparsity_type: DENSE}
//       srste: {sparsity.sparsity_type: SRSTE}
//     lr_set:                                         # the same as a list
//       values: [{label: low, set: {optimizer.lr: 1e-4}}, {high: {optimizer.lr: 1e-3}}]
//   random:                                           # num_samples draws per grid point
//     optimizer.lr: {min: 1e-4, max: 1e-2, log: true}
//     optimizer.grad_accum_steps: {min: 1, max: 4, integer: true}
//     data.dataset: {choices: [synthetic, fashion_mnist]}
//   num_samples: 4
//   seed: 1
//   priority: 0, max_retries: 2, gpus_per_run: 1, idempotency_key: "...", no_reuse: false
//   early_stopping: {policy: asha, metric: top1, ...}   # ASHA in the coordinator (schemas/sweep_blocks.h)
//   search: {algorithm: tpe, budget: 20, metric: top1, ...}  # TPE proposals instead of random draws
#ifndef NMSPARSE_SCHEMAS_SWEEP_H_
#define NMSPARSE_SCHEMAS_SWEEP_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "schemas/experiment_config.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

// Parses a sweep file. The base is parsed (flat reference configs included) and stored fully resolved.
// Errors: InvalidArgument "FILE:LINE: key.path: reason"; NotFound for unreadable files.
absl::StatusOr<v1::SweepSpec> ParseSweepYaml(const std::string& text, const std::string& file_name,
                                             std::vector<std::string>* warnings = nullptr);
absl::StatusOr<v1::SweepSpec> ParseSweepFile(const std::string& path,
                                             std::vector<std::string>* warnings = nullptr);

// Checks that `key_path` names a key of the nested experiment spec ("sparsity.m_sparsity", "seed"); the error
// names the path and lists the keys known at the point where it goes wrong.
absl::Status CheckKeyPath(const std::string& key_path);

// Sets `key_path` of a spec map to the YAML value `value_text` ("8", "SRSTE", "[{sparse: 0.8}, {dense:
// 0.2}]",
// "" or "null" for the default). Nested specs take nested key paths; a flat reference config (scalar `model`)
// takes its own flat keys. Used for sweep axes and nmctl's --set key=value. Unknown key paths are errors
// naming the path.
absl::Status ApplyOverride(YAML::Node& spec, const std::string& key_path, const std::string& value_text);

// One run of an expanded sweep.
struct ResolvedRun {
  int index = 0;                                            // Position in the expansion.
  std::vector<std::pair<std::string, std::string>> labels;  // Axis name -> value label, in axis order.
  ExperimentConfig config;
  std::string canonical_yaml;  // CanonicalYaml(config): what nmtrain receives.
  std::string content_hash;    // ContentHash(config).
  // LegacyContentHash(config) when it differs (a dense run), else empty: what runs stored before dense runs
  // ignored their N:M keys were hashed as, for the coordinator's reuse lookup.
  std::string legacy_content_hash;
};

// One run of a sweep before it is resolved: its labels (axis name -> value label, in axis order) and its
// overrides (key path -> YAML value text, applied in order to the base; see ApplyOverride).
struct RunPoint {
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::pair<std::string, std::string>> set;
};

// Every run's point in expansion order (as documented at ExpandSweep), with gpus_per_run applied.
std::vector<RunPoint> SweepRunPoints(const v1::SweepSpec& sweep);

// `status` of run `index`, its message prefixed "run 3 (recipe=srste, sparsity.m_sparsity=8): ".
absl::Status RunError(int index, const std::vector<std::pair<std::string, std::string>>& labels,
                      const absl::Status& status);

// Expands a sweep: grid points in cartesian-product order (first axis slowest), and for each grid point
// max(num_samples, 1) draws of the random axes (none without random axes). Every run is validated
// (ValidateExperiment); an error names the run index, its labels and the key.
//
// Random draws: one std::mt19937_64 seeded with `seed`, advanced once per random axis per run, in run order
// and axis order; u = (next >> 11) * 2^-53 in [0, 1). Uniform: min + u (max - min); log: exp(ln min + u (ln
// max - ln min)), both clamped to [min, max] so that the bounds are exact (min == max draws min itself);
// integer: min + floor(u (max - min + 1)) (inclusive bounds); choices: choices[floor(u n)]. Numbers are
// written in their shortest exact form, -0 as 0.
//
// The base is YAML text (BaseSpecYaml, schemas/base_spec.h), parsed here with the spec's key table; an error
// in it reads "base: ...". Keys it leaves to the parser (the QKV ratio that follows N:M) follow the run's
// overrides. gpus_per_run, when non-zero, sets resources.gpus.
absl::StatusOr<std::vector<ResolvedRun>> ExpandSweep(const v1::SweepSpec& sweep);

// "recipe=srste, sparsity.m_sparsity=8".
std::string LabelsToString(const std::vector<std::pair<std::string, std::string>>& labels);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SWEEP_H_
