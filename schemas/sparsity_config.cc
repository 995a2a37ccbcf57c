#include "schemas/sparsity_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using yaml_util::Error;

// Keys of §1-§6, in canonical order.
const std::vector<std::string>& KnownKeys() {
  static const auto* keys = new std::vector<std::string>{"sparsity_type",
                                                         "n_sparsity",
                                                         "m_sparsity",
                                                         "n_sparsity_qkv",
                                                         "m_sparsity_qkv",
                                                         "decay_type",
                                                         "decay_coef",
                                                         "structure_decay_flag",
                                                         "structure_decay_type",
                                                         "structure_decay_start_multiple",
                                                         "dense_steps",
                                                         "fine_tune_steps",
                                                         "sparsity_loc",
                                                         "sparse_dim",
                                                         "prune_rate",
                                                         "srste_lambda",
                                                         "phases"};
  return *keys;
}

// Keys of dynamic unstructured sparsity (§7): recognised so that they get a clear "not supported yet".
const std::vector<std::string>& DynamicKeys() {
  static const auto* keys =
      new std::vector<std::string>{"algorithm", "dynamic",      "init_method",        "drop_fraction",
                                   "update",    "param_filter", "balance_out_groups", "balance_in_groups"};
  return *keys;
}

bool Contains(const std::vector<std::string>& v, const std::string& key) {
  return std::find(v.begin(), v.end(), key) != v.end();
}

const std::vector<std::pair<std::string, SparsityType>> kSparsityTypes = {
    {"DENSE", SparsityType::kDense},
    {"STRUCTURED_NM", SparsityType::kStructuredNM},
    {"SRSTE", SparsityType::kSrste},
    {"UNSTRUCTURED", SparsityType::kUnstructured}};
const std::vector<std::pair<std::string, DecayType>> kDecayTypes = {
    {"STEP", DecayType::kStep}, {"LINEAR", DecayType::kLinear}, {"EXP", DecayType::kExp}};
const std::vector<std::pair<std::string, StructureDecayType>> kStructureDecayTypes = {
    {"SPARSIFY", StructureDecayType::kSparsify},
    {"FINE", StructureDecayType::kFine},
    {"DENSIFY", StructureDecayType::kDensify}};
const std::vector<std::pair<std::string, SparseDim>> kSparseDims = {{"ROW", SparseDim::kRow},
                                                                    {"COL", SparseDim::kCol}};
const std::vector<std::pair<std::string, PhaseKind>> kPhaseKinds = {
    {"DENSE", PhaseKind::kDense}, {"SPARSE", PhaseKind::kSparse}, {"FINE_TUNE", PhaseKind::kFineTune}};

const SparsityLocation kCanonicalOrder[] = {SparsityLocation::kFF, SparsityLocation::kQ,
                                            SparsityLocation::kK,  SparsityLocation::kV,
                                            SparsityLocation::kO,  SparsityLocation::kC};

// Source nodes of the keys that cross-field checks refer to, for their line numbers.
struct KeyNodes {
  YAML::Node n, m, n_qkv, m_qkv, dense, fine, phases, flag, multiple;
};

absl::Status ReadLocations(const YAML::Node& value, const std::string& key, SparsityConfig* out) {
  std::string text;
  if (value.IsSequence()) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < value.size(); ++i) {
      auto part = yaml_util::ReadString(value[i], absl::StrCat(key, "[", i, "]"));
      if (!part.ok()) return part.status();
      parts.push_back(*part);
    }
    text = absl::StrJoin(parts, ",");
  } else {
    auto scalar = yaml_util::ReadString(value, key);
    if (!scalar.ok()) return scalar.status();
    text = *scalar;
  }
  auto locations = ParseSparsityLocations(text);
  if (!locations.ok()) return Error(value, key, std::string(locations.status().message()));
  out->locations = *locations;
  return absl::OkStatus();
}

absl::StatusOr<PhaseSpec> ReadPhase(const YAML::Node& entry, const std::string& path) {
  if (!entry.IsMap()) {
    return Error(
        entry, path,
        "value " + yaml_util::Describe(entry) +
            " is not a phase: expected {dense|sparse|fine_tune: fraction} or {kind: K, fraction: F}");
  }
  PhaseSpec phase;
  YAML::Node fraction;
  std::string fraction_path;
  if (entry["kind"]) {
    if (auto st = yaml_util::CheckKeys(entry, path + ".", {"kind", "fraction"}); !st.ok()) return st;
    auto kind = yaml_util::ReadEnum(entry["kind"], path + ".kind", kPhaseKinds);
    if (!kind.ok()) return kind.status();
    phase.kind = *kind;
    fraction = entry["fraction"];
    fraction_path = path + ".fraction";
    if (!fraction) return Error(entry, fraction_path, "missing: a phase needs a fraction");
  } else {
    if (entry.size() != 1) {
      return Error(
          entry, path,
          "value " + yaml_util::Describe(entry) + " must have exactly one key: dense, sparse or fine_tune");
    }
    const YAML::Node key_node = entry.begin()->first;
    auto kind = yaml_util::ReadEnum(key_node, path, kPhaseKinds);
    if (!kind.ok()) return kind.status();
    phase.kind = *kind;
    fraction = entry.begin()->second;
    fraction_path = path + "." + key_node.Scalar();
  }
  auto value = yaml_util::ReadDouble(fraction, fraction_path, 0.0, 1.0);
  if (!value.ok()) return value.status();
  if (*value <= 0.0) {
    return Error(fraction, fraction_path,
                 "value " + fraction.Scalar() + " is out of range: must be in (0, 1]");
  }
  phase.fraction = *value;
  return phase;
}

absl::Status ReadPhases(const YAML::Node& value, const std::string& key, SparsityConfig* out) {
  if (!value.IsSequence()) {
    return Error(value, key, "value " + yaml_util::Describe(value) + " is not a list of phases");
  }
  out->phases.clear();
  double sum = 0.0;
  for (size_t i = 0; i < value.size(); ++i) {
    auto phase = ReadPhase(value[i], absl::StrCat(key, "[", i, "]"));
    if (!phase.ok()) return phase.status();
    sum += phase->fraction;
    out->phases.push_back(*phase);
  }
  if (!out->phases.empty() && std::fabs(sum - 1.0) > 1e-9) {
    return Error(value, key, "phase fractions sum to " + yaml_util::FormatDouble(sum) + ": must sum to 1");
  }
  return absl::OkStatus();
}

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Reads one key into `out`; remembers the nodes that cross-field checks refer to.
absl::Status ReadKey(const std::string& name, const YAML::Node& value, const std::string& key,
                     SparsityConfig* out, KeyNodes* nodes) {
  auto assign = [](auto status_or, auto* field) -> absl::Status {
    if (!status_or.ok()) return status_or.status();
    *field = static_cast<std::remove_pointer_t<decltype(field)>>(*status_or);
    return absl::OkStatus();
  };
  constexpr int64_t kMaxM = std::numeric_limits<int32_t>::max();
  if (name == "sparsity_type")
    return assign(yaml_util::ReadEnum(value, key, kSparsityTypes), &out->sparsity_type);
  if (name == "n_sparsity") {
    nodes->n = value;
    return assign(yaml_util::ReadInt(value, key, 1, kMaxM), &out->nm.n);
  }
  if (name == "m_sparsity") {
    nodes->m = value;
    return assign(yaml_util::ReadInt(value, key, 1, kMaxM), &out->nm.m);
  }
  if (name == "n_sparsity_qkv") {
    nodes->n_qkv = value;
    return assign(yaml_util::ReadInt(value, key, 1, kMaxM), &out->nm_qkv.n);
  }
  if (name == "m_sparsity_qkv") {
    nodes->m_qkv = value;
    return assign(yaml_util::ReadInt(value, key, 1, kMaxM), &out->nm_qkv.m);
  }
  if (name == "decay_type") return assign(yaml_util::ReadEnum(value, key, kDecayTypes), &out->decay_type);
  if (name == "decay_coef") return assign(yaml_util::ReadDouble(value, key, 0.0), &out->decay_coef);
  if (name == "structure_decay_flag") {
    nodes->flag = value;
    return assign(yaml_util::ReadBool(value, key), &out->structure_decay_flag);
  }
  if (name == "structure_decay_type") {
    return assign(yaml_util::ReadEnum(value, key, kStructureDecayTypes), &out->structure_decay_type);
  }
  if (name == "structure_decay_start_multiple") {
    auto v = yaml_util::ReadInt(value, key, 1, 1 << 16);
    if (!v.ok()) return v.status();
    if (!IsPowerOfTwo(*v)) {
      return Error(value, key,
                   "value " + value.Scalar() + " is out of range: must be a power of two (1, 2, 4, 8, ...)");
    }
    out->structure_decay_start_multiple = static_cast<int>(*v);
    return absl::OkStatus();
  }
  if (name == "dense_steps") {
    nodes->dense = value;
    return assign(yaml_util::ReadDouble(value, key, 0.0, 1.0, true), &out->dense_fraction);
  }
  if (name == "fine_tune_steps") {
    nodes->fine = value;
    return assign(yaml_util::ReadDouble(value, key, 0.0, 1.0, true), &out->fine_tune_fraction);
  }
  if (name == "sparsity_loc") return ReadLocations(value, key, out);
  if (name == "sparse_dim") return assign(yaml_util::ReadEnum(value, key, kSparseDims), &out->sparse_dim);
  if (name == "prune_rate")
    return assign(yaml_util::ReadDouble(value, key, 0.0, 1.0, true), &out->prune_rate);
  if (name == "srste_lambda") return assign(yaml_util::ReadDouble(value, key, 0.0), &out->srste_lambda);
  if (name == "phases") {
    nodes->phases = value;
    return ReadPhases(value, key, out);
  }
  return Error(value, key, "unknown key");  // Unreachable: keys are checked before.
}

absl::Status CheckNM(const NM& nm, const YAML::Node& n_node, const std::string& n_key,
                     const std::string& m_key) {
  if (nm.n > nm.m) {
    return Error(n_node, n_key,
                 absl::StrCat("value ", nm.n, " is out of range: must be <= ", m_key, " (", nm.m, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckCrossFields(const SparsityConfig& c, const KeyNodes& nodes, const YAML::Node& map,
                              const std::string& path) {
  if (auto st = CheckNM(c.nm, nodes.n ? nodes.n : map, path + "n_sparsity", "m_sparsity"); !st.ok())
    return st;
  if (auto st = CheckNM(c.nm_qkv, nodes.n_qkv ? nodes.n_qkv : map, path + "n_sparsity_qkv", "m_sparsity_qkv");
      !st.ok()) {
    return st;
  }
  const double both = c.dense_fraction + c.fine_tune_fraction;
  if (both >= 1.0) {
    const YAML::Node& at = nodes.fine ? nodes.fine : map;
    return Error(at, path + "fine_tune_steps",
                 absl::StrCat("value ", yaml_util::FormatDouble(c.fine_tune_fraction),
                              " is out of range: dense_steps + fine_tune_steps must be < 1 (got ",
                              yaml_util::FormatDouble(both), ")"));
  }
  if (!c.phases.empty() && (c.dense_fraction > 0.0 || c.fine_tune_fraction > 0.0)) {
    return Error(
        nodes.phases, path + "phases",
        "cannot be combined with dense_steps / fine_tune_steps: give the dense and fine-tune parts as "
        "phases");
  }
  if (!c.phases.empty() && c.structure_decay_flag) {
    return Error(nodes.phases, path + "phases",
                 "cannot be combined with structure_decay_flag: true (structure decay is defined over "
                 "dense_steps / fine_tune_steps, §4)");
  }
  return absl::OkStatus();
}

}  // namespace

bool SparsityConfig::HasLocation(SparsityLocation loc) const {
  return std::find(locations.begin(), locations.end(), loc) != locations.end();
}

bool operator==(const PhaseSpec& a, const PhaseSpec& b) {
  return a.kind == b.kind && a.fraction == b.fraction;
}

bool operator==(const SparsityConfig& a, const SparsityConfig& b) {
  return a.sparsity_type == b.sparsity_type && a.nm == b.nm && a.nm_qkv == b.nm_qkv &&
         a.decay_type == b.decay_type && a.decay_coef == b.decay_coef &&
         a.structure_decay_flag == b.structure_decay_flag &&
         a.structure_decay_type == b.structure_decay_type &&
         a.structure_decay_start_multiple == b.structure_decay_start_multiple &&
         a.dense_fraction == b.dense_fraction && a.fine_tune_fraction == b.fine_tune_fraction &&
         a.locations == b.locations && a.sparse_dim == b.sparse_dim && a.prune_rate == b.prune_rate &&
         a.srste_lambda == b.srste_lambda && a.phases == b.phases;
}

std::string ToString(SparsityType type) {
  switch (type) {
    case SparsityType::kDense:
      return "DENSE";
    case SparsityType::kStructuredNM:
      return "STRUCTURED_NM";
    case SparsityType::kSrste:
      return "SRSTE";
    case SparsityType::kUnstructured:
      return "UNSTRUCTURED";
  }
  return "?";
}

std::string ToString(DecayType type) {
  switch (type) {
    case DecayType::kStep:
      return "STEP";
    case DecayType::kLinear:
      return "LINEAR";
    case DecayType::kExp:
      return "EXP";
  }
  return "?";
}

std::string ToString(StructureDecayType type) {
  switch (type) {
    case StructureDecayType::kSparsify:
      return "SPARSIFY";
    case StructureDecayType::kFine:
      return "FINE";
    case StructureDecayType::kDensify:
      return "DENSIFY";
  }
  return "?";
}

std::string ToString(SparseDim dim) { return dim == SparseDim::kRow ? "ROW" : "COL"; }

std::string ToString(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::kDense:
      return "DENSE";
    case PhaseKind::kSparse:
      return "SPARSE";
    case PhaseKind::kFineTune:
      return "FINE_TUNE";
  }
  return "?";
}

std::string ToString(SparsityLocation location) {
  switch (location) {
    case SparsityLocation::kFF:
      return "FF";
    case SparsityLocation::kQ:
      return "Q";
    case SparsityLocation::kK:
      return "K";
    case SparsityLocation::kV:
      return "V";
    case SparsityLocation::kO:
      return "O";
    case SparsityLocation::kC:
      return "C";
  }
  return "?";
}

absl::StatusOr<std::vector<SparsityLocation>> ParseSparsityLocations(const std::string& text) {
  const std::string upper = absl::AsciiStrToUpper(text);
  std::set<SparsityLocation> found;
  for (size_t i = 0; i < upper.size();) {
    const char c = upper[i];
    if (c == ',' || c == '+' || c == ' ' || c == '\t' || c == '|' || c == '/') {
      ++i;
    } else if (upper.compare(i, 2, "FF") == 0) {
      found.insert(SparsityLocation::kFF);
      i += 2;
    } else if (c == 'Q' || c == 'K' || c == 'V' || c == 'O' || c == 'C') {
      const SparsityLocation loc = c == 'Q'   ? SparsityLocation::kQ
                                   : c == 'K' ? SparsityLocation::kK
                                   : c == 'V' ? SparsityLocation::kV
                                   : c == 'O' ? SparsityLocation::kO
                                              : SparsityLocation::kC;
      found.insert(loc);
      ++i;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "value '", text, "' is not a set of locations: must be letters/words over FF, Q, K, V, O, C ",
          "(e.g. FF, FFQKV, FF,Q,K,V)"));
    }
  }
  if (found.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("value '", text, "' names no location: must name at least one of FF, Q, K, V, O, C"));
  }
  std::vector<SparsityLocation> out;
  for (SparsityLocation loc : kCanonicalOrder) {
    if (found.count(loc)) out.push_back(loc);
  }
  return out;
}

std::string SparsityLocationsToString(const std::vector<SparsityLocation>& locations) {
  std::vector<std::string> names;
  for (SparsityLocation loc : kCanonicalOrder) {
    if (std::find(locations.begin(), locations.end(), loc) != locations.end()) names.push_back(ToString(loc));
  }
  return absl::StrJoin(names, ",");
}

NM TargetFor(const SparsityConfig& config, SparsityLocation location) {
  const bool qkv = location == SparsityLocation::kQ || location == SparsityLocation::kK ||
                   location == SparsityLocation::kV;
  return qkv ? config.nm_qkv : config.nm;
}

bool IsSparsityKey(const std::string& key) {
  return Contains(KnownKeys(), key) || Contains(DynamicKeys(), key);
}

absl::StatusOr<SparsityConfig> ParseSparsityConfig(const YAML::Node& node, const std::string& path) {
  SparsityConfig config;
  if (yaml_util::IsNullish(node)) return config;
  const std::string section = path.empty() ? "sparsity" : path.substr(0, path.size() - (path.back() == '.'));
  if (!node.IsMap()) {
    return Error(node, section, "value " + yaml_util::Describe(node) + " is not a map of sparsity keys");
  }
  KeyNodes nodes;
  bool n_qkv_given = false, m_qkv_given = false;
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    const std::string key = path + name;
    if (Contains(DynamicKeys(), name)) {
      return Error(kv.first, key, "dynamic unstructured sparsity (§7) is not supported yet");
    }
    if (!Contains(KnownKeys(), name)) {
      return Error(kv.first, key, "unknown key; known keys: " + absl::StrJoin(KnownKeys(), ", "));
    }
    if (yaml_util::IsNullish(kv.second)) continue;  // null: the default (PyYAML dumps None as null).
    if (auto st = ReadKey(name, kv.second, key, &config, &nodes); !st.ok()) return st;
    n_qkv_given = n_qkv_given || name == "n_sparsity_qkv";
    m_qkv_given = m_qkv_given || name == "m_sparsity_qkv";
  }
  if (!n_qkv_given) config.nm_qkv.n = config.nm.n;
  if (!m_qkv_given) config.nm_qkv.m = config.nm.m;
  if (auto st = CheckCrossFields(config, nodes, node, path); !st.ok()) return st;
  return config;
}

std::vector<std::pair<std::string, std::string>> SparsityScalarTexts(const SparsityConfig& c) {
  return {{"sparsity_type", ToString(c.sparsity_type)},
          {"n_sparsity", absl::StrCat(c.nm.n)},
          {"m_sparsity", absl::StrCat(c.nm.m)},
          {"n_sparsity_qkv", absl::StrCat(c.nm_qkv.n)},
          {"m_sparsity_qkv", absl::StrCat(c.nm_qkv.m)},
          {"decay_type", ToString(c.decay_type)},
          {"decay_coef", yaml_util::FormatDouble(c.decay_coef)},
          {"structure_decay_flag", c.structure_decay_flag ? "true" : "false"},
          {"structure_decay_type", ToString(c.structure_decay_type)},
          {"structure_decay_start_multiple", absl::StrCat(c.structure_decay_start_multiple)},
          {"dense_steps", yaml_util::FormatDouble(c.dense_fraction)},
          {"fine_tune_steps", yaml_util::FormatDouble(c.fine_tune_fraction)},
          {"sparsity_loc", SparsityLocationsToString(c.locations)},
          {"sparse_dim", ToString(c.sparse_dim)},
          {"prune_rate", yaml_util::FormatDouble(c.prune_rate)},
          {"srste_lambda", yaml_util::FormatDouble(c.srste_lambda)}};
}

YAML::Node PhasesToYaml(const std::vector<PhaseSpec>& phases) {
  YAML::Node out(YAML::NodeType::Sequence);
  for (const PhaseSpec& p : phases) {
    YAML::Node entry(YAML::NodeType::Map);
    entry["kind"] = ToString(p.kind);
    entry["fraction"] = yaml_util::FormatDouble(p.fraction);
    out.push_back(entry);
  }
  out.SetStyle(YAML::EmitterStyle::Flow);  // "phases: []" / "phases: [{kind: SPARSE, fraction: 0.8}]".
  return out;
}

YAML::Node SparsityConfigToYaml(const SparsityConfig& c) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& [key, text] : SparsityScalarTexts(c)) out[key] = text;
  out["phases"] = PhasesToYaml(c.phases);
  return out;
}

}  // namespace nmsparse
