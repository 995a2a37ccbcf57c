#include "schemas/semi_structured_config.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/param_filter.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using yaml_util::Error;

const std::vector<std::pair<std::string, Accelerate>> kAccelerate = {
    {"auto", Accelerate::kAuto}, {"force", Accelerate::kForce}, {"off", Accelerate::kOff}};
const std::vector<std::pair<std::string, SemiStructuredMask>> kMasks = {
    {"exact", SemiStructuredMask::kExact}, {"transposable", SemiStructuredMask::kTransposable}};
const std::vector<std::string> kKeys = {"layers", "activation_layers", "accelerate",    "mask",
                                        "margin", "dense_after",       "decision_cache"};

// A glob or a list of globs.
absl::StatusOr<std::vector<std::string>> ReadPatterns(const YAML::Node& value, const std::string& path) {
  std::vector<std::string> patterns;
  if (!value.IsSequence()) {
    auto one = yaml_util::ReadString(value, path);
    if (!one.ok()) return one.status();
    patterns.push_back(*one);
  } else {
    for (size_t i = 0; i < value.size(); ++i) {
      auto one = yaml_util::ReadString(value[i], absl::StrCat(path, "[", i, "]"));
      if (!one.ok()) return one.status();
      patterns.push_back(*one);
    }
  }
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (patterns[i].empty()) return Error(value, path, "an empty pattern matches no layer");
  }
  return patterns;
}

absl::Status ReadDenseAfter(const YAML::Node& value, const std::string& path, SemiStructuredConfig* c) {
  if (!value.IsMap() || value.size() != 1) {
    return Error(value, path,
                 "value " + yaml_util::Describe(value) + " must be {fraction: F} or {phase: INDEX}");
  }
  if (auto st = yaml_util::CheckKeys(value, path + ".", {"fraction", "phase"}); !st.ok()) return st;
  if (value["fraction"]) {
    auto f = yaml_util::ReadDouble(value["fraction"], path + ".fraction", 0.0, 1.0);
    if (!f.ok()) return f.status();
    if (*f <= 0.0) {
      return Error(value["fraction"], path + ".fraction",
                   "value " + value["fraction"].Scalar() + " is out of range: must be in (0, 1]");
    }
    c->dense_after_fraction = *f;
    return absl::OkStatus();
  }
  auto phase = yaml_util::ReadInt(value["phase"], path + ".phase", 0, 1 << 20);
  if (!phase.ok()) return phase.status();
  c->dense_after_phase = static_cast<int>(*phase);
  return absl::OkStatus();
}

absl::Status ReadKey(const std::string& key, const YAML::Node& value, const std::string& path,
                     SemiStructuredConfig* c) {
  if (key == "layers" || key == "activation_layers") {
    auto patterns = ReadPatterns(value, path);
    if (!patterns.ok()) return patterns.status();
    (key == "layers" ? c->layers : c->activation_layers) = *patterns;
  } else if (key == "accelerate") {
    auto a = yaml_util::ReadEnum(value, path, kAccelerate);
    if (!a.ok()) return a.status();
    c->accelerate = *a;
  } else if (key == "mask") {
    auto m = yaml_util::ReadEnum(value, path, kMasks);
    if (!m.ok()) return m.status();
    c->mask = *m;
  } else if (key == "margin") {
    auto m = yaml_util::ReadDouble(value, path, 0.0, 1.0, /*max_open=*/true);
    if (!m.ok()) return m.status();
    c->margin = *m;
  } else if (key == "dense_after") {
    return ReadDenseAfter(value, path, c);
  } else {  // decision_cache
    auto s = yaml_util::ReadString(value, path);
    if (!s.ok()) return s.status();
    c->decision_cache = *s;
  }
  return absl::OkStatus();
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

}  // namespace

bool operator==(const SemiStructuredConfig& a, const SemiStructuredConfig& b) {
  return a.layers == b.layers && a.activation_layers == b.activation_layers && a.accelerate == b.accelerate &&
         a.mask == b.mask && a.margin == b.margin && a.dense_after_fraction == b.dense_after_fraction &&
         a.dense_after_phase == b.dense_after_phase && a.decision_cache == b.decision_cache;
}

absl::StatusOr<SemiStructuredConfig> ParseSemiStructuredConfig(const YAML::Node& node,
                                                               const std::string& path) {
  SemiStructuredConfig config;
  if (yaml_util::IsNullish(node)) return config;
  if (!node.IsMap()) return Error(node, path, "value " + yaml_util::Describe(node) + " is not a map");
  if (auto st = yaml_util::CheckKeys(node, path + ".", kKeys); !st.ok()) return st;
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (!seen.insert(key).second) return Error(kv.first, path + "." + key, "duplicate key");
    if (yaml_util::IsNullish(kv.second)) continue;
    if (auto st = ReadKey(key, kv.second, path + "." + key, &config); !st.ok()) return st;
  }
  return config;
}

YAML::Node SemiStructuredConfigToYaml(const SemiStructuredConfig& config) {
  YAML::Node node(YAML::NodeType::Map);
  YAML::Node layers(YAML::NodeType::Sequence), activation(YAML::NodeType::Sequence);
  for (const auto& p : config.layers) layers.push_back(p);
  for (const auto& p : config.activation_layers) activation.push_back(p);
  node["layers"] = layers;
  node["activation_layers"] = activation;
  node["accelerate"] = ToString(config.accelerate);
  node["mask"] = ToString(config.mask);
  node["margin"] = yaml_util::FormatDouble(config.margin);
  YAML::Node dense_after(YAML::NodeType::Map);
  if (config.dense_after_phase >= 0) {
    dense_after["phase"] = config.dense_after_phase;
  } else {
    dense_after["fraction"] = yaml_util::FormatDouble(config.dense_after_fraction);
  }
  node["dense_after"] = dense_after;
  node["decision_cache"] = config.decision_cache;
  return node;
}

std::string ToString(Accelerate accelerate) {
  for (const auto& [name, value] : kAccelerate) {
    if (value == accelerate) return name;
  }
  return "?";
}

std::string ToString(SemiStructuredMask mask) {
  return mask == SemiStructuredMask::kExact ? "exact" : "transposable";
}

std::string ToString(SemiStructuredKind kind) {
  return kind == SemiStructuredKind::kWeight ? "weight_2:4" : "activation_2:4";
}

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
