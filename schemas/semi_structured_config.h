// The `semi_structured:` section of an experiment spec: which linears run on the GPU's 2:4 semi-structured
// sparse kernels (cuSPARSELt), when they swap back to dense, and whether speed or study decides
// (docs/accelerated-2-4.md). Plain C++ (no LibTorch): nmtrain, nmserver and nmctl validate it alike.
//
// The keys, with their defaults:
// - layers: globs over module names ("blocks.*.mlp.fc1"): weight 2:4 with the engine's own mask;
// - activation_layers: globs: the input activation pruned 2:4 along its last dimension;
// - accelerate: auto (the 2:4 kernel only where it beats dense by `margin`), force, or off;
// - mask: exact (the engine's mask) or transposable (2:4 along both dimensions);
// - margin: 0.05 (auto: sparse must be at least (1 + margin)x faster than dense);
// - dense_after: {fraction: F} or {phase: K}: from then on the chosen layers train dense;
// - decision_cache: the timings file; empty: $NMSPARSE_CACHE_DIR or ~/.cache/nmsparse.
#ifndef NMSPARSE_SCHEMAS_SEMI_STRUCTURED_CONFIG_H_
#define NMSPARSE_SCHEMAS_SEMI_STRUCTURED_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schemas/enum_table.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

template <typename S>
class KeyTable;

enum class Accelerate { kAuto, kForce, kOff };
enum class SemiStructuredMask { kExact, kTransposable };
enum class SemiStructuredKind { kWeight, kActivation };

struct SemiStructuredConfig {
  std::vector<std::string> layers;             // Globs over module names (fnmatch, '*' crosses dots).
  std::vector<std::string> activation_layers;  // Likewise.
  Accelerate accelerate = Accelerate::kAuto;
  SemiStructuredMask mask = SemiStructuredMask::kExact;
  double margin = 0.05;
  double dense_after_fraction = 1.0;  // Of total optimizer steps; 1: never dense.
  int dense_after_phase = -1;         // Index into sparsity.phases; -1: none.
  std::string decision_cache;

  bool Enabled() const { return !layers.empty() || !activation_layers.empty(); }
};

bool operator==(const SemiStructuredConfig& a, const SemiStructuredConfig& b);

// Parses the section (`path` is its key path, e.g. "semi_structured"). Unknown keys, wrong types and out of
// range values are InvalidArgument naming the key, the value and the line; dense_after takes exactly one of
// fraction (in (0, 1]) and phase (>= 0).
absl::StatusOr<SemiStructuredConfig> ParseSemiStructuredConfig(const YAML::Node& node,
                                                               const std::string& path);

// The section as a YAML map with every key (defaults filled in); parses back to an equal config.
YAML::Node SemiStructuredConfigToYaml(const SemiStructuredConfig& config);

// The keys of the section in canonical order (schemas/spec_keys.h), and the names of its enums.
const KeyTable<SemiStructuredConfig>& SemiStructuredKeys();
const EnumTable<Accelerate>& AccelerateModes();
const EnumTable<SemiStructuredMask>& SemiStructuredMasks();
const EnumTable<SemiStructuredKind>& SemiStructuredKinds();

std::string ToString(Accelerate accelerate);
std::string ToString(SemiStructuredMask mask);
std::string ToString(SemiStructuredKind kind);

// A linear layer of a model by module name ("blocks.0.mlp.fc1") with its weight's [out, in].
struct LinearShape {
  std::string name;
  int64_t out_features = 0;
  int64_t in_features = 0;
};

struct SemiStructuredChoice {
  LinearShape layer;
  SemiStructuredKind kind = SemiStructuredKind::kWeight;
};

// The chosen linears in `linears`' order. InvalidArgument naming the key and pattern when a pattern matches
// no linear (the error lists a few names), when a layer matches both lists, or when a chosen layer's
// dimension cannot hold 2:4 groups (in_features, and out_features too for a transposable mask, multiples of
// 4).
absl::StatusOr<std::vector<SemiStructuredChoice>> SelectSemiStructuredLayers(
    const SemiStructuredConfig& config, const std::vector<LinearShape>& linears,
    const std::string& path = "semi_structured");

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SEMI_STRUCTURED_CONFIG_H_
