#include "schemas/semi_structured_config.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/param_filter.h"
#include "schemas/spec_key_builders.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using yaml_util::Error;

using C = SemiStructuredConfig;
constexpr int64_t kMaxPhase = 1 << 20;

// A glob or a list of globs, none empty; written as a block list.
absl::StatusOr<std::vector<std::string>> ReadPatterns(const YAML::Node& value, const std::string& path) {
  auto patterns = ReadStringOrList(value, path);
  if (!patterns.ok()) return patterns.status();
  for (const std::string& p : *patterns) {
    if (p.empty()) return Error(value, path, "an empty pattern matches no layer");
  }
  return patterns;
}

// Always a block list: an empty one is written "[]" on a line of its own, as run hashes have it.
void WritePatterns(const std::vector<std::string>& patterns, const KeyInfo& self, SpecWriter* out) {
  out->Collection(self, StringList(patterns, /*flow=*/false));
}

SpecKey<C> PatternsKey(const std::string& name, std::vector<std::string> C::*member) {
  return MemberKey<C, std::vector<std::string>>(name, KeyKind::kGlobs, member, ReadPatterns, WritePatterns);
}

// The keys of dense_after, exactly one of which is given.
const KeyTable<C>& DenseAfterKeys() {
  static const auto* keys = new KeyTable<C>({
      NumberKey<C>("fraction", &C::dense_after_fraction, 0.0, 1.0, /*max_open=*/false, /*min_open=*/true)
          .Doc("Of total optimizer steps; 1: never.")
          .NoDefault(),
      IntKey<C>("phase", &C::dense_after_phase, 0, kMaxPhase)
          .Doc("An index into sparsity.phases.")
          .NoDefault(),
  });
  return *keys;
}

SpecKey<C> DenseAfterKey() {
  SpecKey<C> key;
  key.info.name = "dense_after";
  key.info.kind = KeyKind::kSection;
  key.info.keys = DenseAfterKeys().Infos();
  key.read = [](const YAML::Node& value, const std::string& path, C* c) -> absl::Status {
    if (!value.IsMap() || value.size() != 1) {
      return Error(value, path,
                   "value " + yaml_util::Describe(value) + " must be {fraction: F} or {phase: INDEX}");
    }
    C parsed;
    if (absl::Status st = DenseAfterKeys().Read(value, path, &parsed); !st.ok()) return st;
    c->dense_after_fraction = parsed.dense_after_fraction;
    c->dense_after_phase = parsed.dense_after_phase;
    return absl::OkStatus();
  };
  key.equal = [](const C& a, const C& b) {
    return a.dense_after_fraction == b.dense_after_fraction && a.dense_after_phase == b.dense_after_phase;
  };
  key.write = [](const C& c, const KeyInfo& self, SpecWriter* out) {
    NodeWriter dense_after;
    const SpecKey<C>* given = DenseAfterKeys().Find(c.dense_after_phase >= 0 ? "phase" : "fraction");
    given->write(c, given->info, &dense_after);
    out->Collection(self, dense_after.root());
  };
  key.reset = [](C* c) {
    c->dense_after_fraction = C().dense_after_fraction;
    c->dense_after_phase = C().dense_after_phase;
  };
  return key;
}

std::string FirstNames(const std::vector<LinearShape>& linears) {
  std::vector<std::string> names;
  for (size_t i = 0; i < linears.size() && i < 4; ++i) names.push_back(linears[i].name);
  if (linears.size() > 4) names.push_back("...");
  return absl::StrJoin(names, ", ");
}

bool MatchesAny(const std::vector<std::string>& patterns, const std::string& name) {
  for (const std::string& p : patterns) {
    if (GlobMatch(p, name)) return true;
  }
  return false;
}

absl::Status CheckEveryPatternMatches(const std::vector<std::string>& patterns,
                                      const std::vector<LinearShape>& linears, const std::string& path) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    bool matched = false;
    for (const LinearShape& l : linears) matched = matched || GlobMatch(patterns[i], l.name);
    if (!matched) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, "[", i, "]: pattern \"", patterns[i],
                       "\" matches no linear layer (linears: ", FirstNames(linears), ")"));
    }
  }
  return absl::OkStatus();
}

// 2:4 groups run along in_features; a transposable mask also along out_features.
absl::Status CheckHolds24(const SemiStructuredConfig& config, const SemiStructuredChoice& choice,
                          const std::string& path) {
  const LinearShape& l = choice.layer;
  const bool both =
      choice.kind == SemiStructuredKind::kWeight && config.mask == SemiStructuredMask::kTransposable;
  if (l.in_features % 4 != 0 || (both && l.out_features % 4 != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": layer ", l.name, " [", l.out_features, ", ", l.in_features,
        "] cannot hold 2:4 groups: in_features", both ? " and out_features" : "", " must be multiples of 4"));
  }
  return absl::OkStatus();
}

// The names of the section's enums, built once.
struct SemiStructuredEnumNames {
  EnumTable<Accelerate> accelerate{
      {"auto", Accelerate::kAuto}, {"force", Accelerate::kForce}, {"off", Accelerate::kOff}};
  EnumTable<SemiStructuredMask> masks{{"exact", SemiStructuredMask::kExact},
                                      {"transposable", SemiStructuredMask::kTransposable}};
  EnumTable<SemiStructuredKind> kinds{{"weight_2:4", SemiStructuredKind::kWeight},
                                      {"activation_2:4", SemiStructuredKind::kActivation}};
};

}  // namespace

const EnumTable<Accelerate>& AccelerateModes() { return Instance<SemiStructuredEnumNames>().accelerate; }
const EnumTable<SemiStructuredMask>& SemiStructuredMasks() {
  return Instance<SemiStructuredEnumNames>().masks;
}
const EnumTable<SemiStructuredKind>& SemiStructuredKinds() {
  return Instance<SemiStructuredEnumNames>().kinds;
}

const KeyTable<SemiStructuredConfig>& SemiStructuredKeys() {
  static const auto* keys = new KeyTable<C>({
      PatternsKey("layers", &C::layers)
          .Doc("Globs over module names (fnmatch, '*' crosses dots), e.g. blocks.*.mlp.fc1: linears whose "
               "weight "
               "is 2:4 with the sparsity engine's own 2:4 mask.")
          .Validated(),
      PatternsKey("activation_layers", &C::activation_layers)
          .Doc("Globs: linears whose input activation is pruned 2:4 along its last dimension.")
          .Validated(),
      EnumKey<C>("accelerate", &C::accelerate, AccelerateModes())
          .Doc("auto: the 2:4 kernel only where it beats dense by margin (timed at start-up, cached per GPU "
               "and "
               "shape); force: everywhere (study); off: masked dense."),
      EnumKey<C>("mask", &C::mask, SemiStructuredMasks())
          .Doc("exact: the engine's mask, gradients as dense GEMMs; transposable: 2:4 along both dimensions "
               "(a "
               "change to the method).")
          .Validated(),
      NumberKey<C>("margin", &C::margin, 0.0, 1.0, /*max_open=*/true)
          .Doc("auto: the 2:4 GEMM must be at least (1 + margin)x faster than dense."),
      DenseAfterKey()
          .Doc("From then on the chosen layers train dense: {fraction: F} of total optimizer steps (in (0, "
               "1], 1: "
               "never) or {phase: INDEX} into sparsity.phases.")
          .Validated(),
      StringKey<C>("decision_cache", &C::decision_cache)
          .Doc("File of cached dense vs 2:4 timings per GPU model and shape; empty: $NMSPARSE_CACHE_DIR or "
               "~/.cache/nmsparse/semi_structured_timings.tsv."),
  });
  return *keys;
}

bool operator==(const SemiStructuredConfig& a, const SemiStructuredConfig& b) {
  return SemiStructuredKeys().Equal(a, b);
}

absl::StatusOr<SemiStructuredConfig> ParseSemiStructuredConfig(const YAML::Node& node,
                                                               const std::string& path) {
  SemiStructuredConfig config;
  if (absl::Status st = SemiStructuredKeys().Read(node, path, &config); !st.ok()) return st;
  return config;
}

YAML::Node SemiStructuredConfigToYaml(const SemiStructuredConfig& config) {
  NodeWriter out;
  SemiStructuredKeys().Write(config, &out);
  return out.root();
}

std::string ToString(Accelerate accelerate) { return AccelerateModes().Name(accelerate); }
std::string ToString(SemiStructuredMask mask) { return SemiStructuredMasks().Name(mask); }
std::string ToString(SemiStructuredKind kind) { return SemiStructuredKinds().Name(kind); }

absl::StatusOr<std::vector<SemiStructuredChoice>> SelectSemiStructuredLayers(
    const SemiStructuredConfig& config, const std::vector<LinearShape>& linears, const std::string& path) {
  if (auto st = CheckEveryPatternMatches(config.layers, linears, path + ".layers"); !st.ok()) return st;
  if (auto st = CheckEveryPatternMatches(config.activation_layers, linears, path + ".activation_layers");
      !st.ok()) {
    return st;
  }
  std::vector<SemiStructuredChoice> chosen;
  for (const LinearShape& l : linears) {
    const bool weight = MatchesAny(config.layers, l.name);
    const bool activation = MatchesAny(config.activation_layers, l.name);
    if (weight && activation) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": layer ", l.name,
                       " matches both layers and activation_layers: a linear is one or the other"));
    }
    if (!weight && !activation) continue;
    SemiStructuredChoice choice{l, weight ? SemiStructuredKind::kWeight : SemiStructuredKind::kActivation};
    const std::string key = path + (weight ? ".layers" : ".activation_layers");
    if (auto st = CheckHolds24(config, choice, key); !st.ok()) return st;
    chosen.push_back(choice);
  }
  return chosen;
}

}  // namespace nmsparse
