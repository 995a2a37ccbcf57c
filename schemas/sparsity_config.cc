#include "schemas/sparsity_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/recipe.h"
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
                                                         "phases",
                                                         "dynamic"};
  return *keys;
}

// Keys of one dynamic sparsity group (§7), in canonical (v1.DynamicSparsityGroup) order.
const std::vector<std::string>& GroupKeys() {
  static const auto* keys =
      new std::vector<std::string>{"algorithm", "sparsity",     "drop_fraction",      "init_method",
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

const std::vector<std::pair<std::string, DynamicAlgorithm>> kAlgorithms = {
    {"STATIC", DynamicAlgorithm::kStatic},
    {"GMP", DynamicAlgorithm::kGmp},
    {"SET", DynamicAlgorithm::kSet},
    {"RIGL", DynamicAlgorithm::kRigl}};
const std::vector<std::pair<std::string, InitMethod>> kInitMethods = {
    {"RANDOM", InitMethod::kRandom}, {"TOPK", InitMethod::kTopk}, {"FROM_ZEROS", InitMethod::kFromZeros}};

template <typename T>
std::string NameOf(const std::vector<std::pair<std::string, T>>& names, T value) {
  for (const auto& [name, v] : names) {
    if (v == value) return name;
  }
  return "?";
}

const SparsityLocation kCanonicalOrder[] = {SparsityLocation::kFF, SparsityLocation::kQ,
                                            SparsityLocation::kK,  SparsityLocation::kV,
                                            SparsityLocation::kO,  SparsityLocation::kC};

// Source nodes of the keys that cross-field checks refer to, for their line numbers.
struct KeyNodes {
  YAML::Node n, m, n_qkv, m_qkv, dense, fine, phases, flag, multiple, type, dynamic;
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

absl::StatusOr<UpdateSchedule> ReadUpdate(const YAML::Node& node, const std::string& path) {
  UpdateSchedule update;
  if (!node.IsMap()) {
    return Error(node, path, "value " + yaml_util::Describe(node) + " is not a map {freq, start, stop}");
  }
  if (auto st = yaml_util::CheckKeys(node, path + ".", {"freq", "start", "stop"}); !st.ok()) return st;
  for (const auto& [name, field, min] : {std::make_tuple("freq", &update.freq, int64_t{1}),
                                         std::make_tuple("start", &update.start, int64_t{0}),
                                         std::make_tuple("stop", &update.stop, int64_t{0})}) {
    if (yaml_util::IsNullish(node[name])) continue;
    auto v = yaml_util::ReadInt(node[name], path + "." + name, min);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  if (update.stop != 0 && update.stop <= update.start) {
    return Error(node["stop"], path + ".stop",
                 absl::StrCat("value ", update.stop, " is out of range: must be > start (", update.start,
                              ") or 0 (never stops)"));
  }
  return update;
}

absl::Status ReadFilter(const YAML::Node& value, const std::string& key, std::vector<std::string>* out) {
  out->clear();
  auto add = [&](const YAML::Node& node, const std::string& path) -> absl::Status {
    auto glob = yaml_util::ReadString(node, path);
    if (!glob.ok()) return glob.status();
    if (glob->empty()) return Error(node, path, "value '' is empty: must be a glob such as blocks.*.mlp.*");
    out->push_back(*glob);
    return absl::OkStatus();
  };
  if (!value.IsSequence()) return add(value, key);
  for (size_t i = 0; i < value.size(); ++i) {
    if (auto st = add(value[i], absl::StrCat(key, "[", i, "]")); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status ReadGroupKey(const std::string& name, const YAML::Node& value, const std::string& key,
                          DynamicSparsityGroup* g) {
  auto assign = [](auto status_or, auto* field) -> absl::Status {
    if (!status_or.ok()) return status_or.status();
    *field = static_cast<std::remove_pointer_t<decltype(field)>>(*status_or);
    return absl::OkStatus();
  };
  if (name == "algorithm") return assign(yaml_util::ReadEnum(value, key, kAlgorithms), &g->algorithm);
  if (name == "sparsity") return assign(ParseStepSchedule(value, key), &g->sparsity);
  if (name == "drop_fraction") return assign(ParseStepSchedule(value, key), &g->drop_fraction);
  if (name == "init_method") return assign(yaml_util::ReadEnum(value, key, kInitMethods), &g->init_method);
  if (name == "update") return assign(ReadUpdate(value, key), &g->update);
  if (name == "param_filter") return ReadFilter(value, key, &g->param_filter);
  if (name == "balance_out_groups")
    return assign(yaml_util::ReadInt(value, key, 0, 1 << 20), &g->balance_out_groups);
  if (name == "balance_in_groups")
    return assign(yaml_util::ReadInt(value, key, 0, 1 << 20), &g->balance_in_groups);
  return Error(value, key, "unknown key");  // Unreachable: keys are checked before.
}

// One group; `path` is its key path without the trailing dot ("sparsity.dynamic[0]"). The inline shape
// checks its keys itself and may hold sparsity_type (`inline_section`).
absl::StatusOr<DynamicSparsityGroup> ReadGroup(const YAML::Node& node, const std::string& path,
                                               bool inline_section = false) {
  if (!node.IsMap()) {
    return Error(node, path,
                 "value " + yaml_util::Describe(node) +
                     " is not a dynamic sparsity group: expected {algorithm: ..., sparsity: ..., ...}");
  }
  if (!inline_section) {
    if (auto st = yaml_util::CheckKeys(node, path + ".", GroupKeys()); !st.ok()) return st;
  }
  DynamicSparsityGroup group;
  bool has_sparsity = false;
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    if (yaml_util::IsNullish(kv.second) || name == "sparsity_type") continue;
    has_sparsity = has_sparsity || name == "sparsity";
    if (auto st = ReadGroupKey(name, kv.second, path + "." + name, &group); !st.ok()) return st;
  }
  if (!has_sparsity) {
    return Error(node, path + ".sparsity",
                 "missing: a dynamic sparsity group needs its sparsity (a number in [0, 1] or a schedule)");
  }
  return group;
}

absl::Status ReadGroups(const YAML::Node& value, const std::string& key, SparsityConfig* out) {
  if (!value.IsSequence()) {
    return Error(value, key,
                 "value " + yaml_util::Describe(value) + " is not a list of dynamic sparsity groups");
  }
  out->dynamic.clear();
  for (size_t i = 0; i < value.size(); ++i) {
    auto group = ReadGroup(value[i], absl::StrCat(key, "[", i, "]"));
    if (!group.ok()) return group.status();
    out->dynamic.push_back(*group);
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
  if (name == "sparsity_type") {
    nodes->type = value;
    return assign(yaml_util::ReadEnum(value, key, kSparsityTypes), &out->sparsity_type);
  }
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
  if (name == "dynamic") {
    nodes->dynamic = value;
    return ReadGroups(value, key, out);
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
  if (c.IsDynamic() && nodes.type && c.sparsity_type != SparsityType::kUnstructured) {
    return Error(nodes.type, path + "sparsity_type",
                 "value " + ToString(c.sparsity_type) +
                     " cannot be combined with dynamic groups: dynamic sparsity (§7) is UNSTRUCTURED");
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

bool UpdateSchedule::IsUpdateStep(int64_t step) const {
  return step > start && freq > 0 && (step - start) % freq == 0 && (stop == 0 || step < stop);
}

bool operator==(const UpdateSchedule& a, const UpdateSchedule& b) {
  return a.freq == b.freq && a.start == b.start && a.stop == b.stop;
}

bool operator==(const DynamicSparsityGroup& a, const DynamicSparsityGroup& b) {
  return a.algorithm == b.algorithm && a.sparsity == b.sparsity && a.drop_fraction == b.drop_fraction &&
         a.init_method == b.init_method && a.update == b.update && a.param_filter == b.param_filter &&
         a.balance_out_groups == b.balance_out_groups && a.balance_in_groups == b.balance_in_groups;
}

std::string ToString(DynamicAlgorithm algorithm) { return NameOf(kAlgorithms, algorithm); }
std::string ToString(InitMethod method) { return NameOf(kInitMethods, method); }

bool operator==(const SparsityConfig& a, const SparsityConfig& b) {
  return a.sparsity_type == b.sparsity_type && a.nm == b.nm && a.nm_qkv == b.nm_qkv &&
         a.decay_type == b.decay_type && a.decay_coef == b.decay_coef &&
         a.structure_decay_flag == b.structure_decay_flag &&
         a.structure_decay_type == b.structure_decay_type &&
         a.structure_decay_start_multiple == b.structure_decay_start_multiple &&
         a.dense_fraction == b.dense_fraction && a.fine_tune_fraction == b.fine_tune_fraction &&
         a.locations == b.locations && a.sparse_dim == b.sparse_dim && a.prune_rate == b.prune_rate &&
         a.srste_lambda == b.srste_lambda && a.phases == b.phases && a.dynamic == b.dynamic;
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
  return Contains(KnownKeys(), key) || Contains(GroupKeys(), key) || key == kRecipeKey;
}

namespace {

// `sparsity: {algorithm: ..., sparsity: ...}`: one group written inline; sparsity_type may only say
// UNSTRUCTURED.
absl::StatusOr<SparsityConfig> ParseInlineGroup(const YAML::Node& node, const std::string& path,
                                                const std::string& section) {
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    if (name == "sparsity_type") {
      auto type = yaml_util::ReadEnum(kv.second, path + name, kSparsityTypes);
      if (!type.ok()) return type.status();
      if (*type != SparsityType::kUnstructured) {
        return Error(kv.second, path + name,
                     "value " + kv.second.Scalar() +
                         " cannot be combined with dynamic group keys (algorithm, sparsity, ...): dynamic "
                         "sparsity (§7) is UNSTRUCTURED");
      }
    } else if (!Contains(GroupKeys(), name)) {
      return Error(kv.first, path + name,
                   "unknown key next to dynamic group keys; a group takes " +
                       absl::StrJoin(GroupKeys(), ", ") + " (N:M keys go in a section without them)");
    }
  }
  auto parsed = ReadGroup(node, section, /*inline_section=*/true);
  if (!parsed.ok()) return parsed.status();
  SparsityConfig config;
  config.sparsity_type = SparsityType::kUnstructured;
  config.dynamic.push_back(*parsed);
  return config;
}

}  // namespace

namespace {
// The keys of a sparsity map without a recipe key (ParseSparsityConfig expands it first).
absl::StatusOr<SparsityConfig> ParseSparsityKeys(const YAML::Node& node, const std::string& path);
}  // namespace

absl::StatusOr<SparsityConfig> ParseSparsityConfig(const YAML::Node& node, const std::string& path) {
  SparsityConfig config;
  if (yaml_util::IsNullish(node)) return config;
  const std::string section = path.empty() ? "sparsity" : path.substr(0, path.size() - (path.back() == '.'));
  if (node.IsSequence()) {  // A list of dynamic groups.
    if (auto st = ReadGroups(node, section, &config); !st.ok()) return st;
    config.sparsity_type = SparsityType::kUnstructured;
    return config;
  }
  if (node.IsMap()) {
    for (const auto& kv : node) {
      if (Contains(GroupKeys(), kv.first.as<std::string>())) return ParseInlineGroup(node, path, section);
    }
  }
  if (!node.IsMap()) {
    return Error(node, section, "value " + yaml_util::Describe(node) + " is not a map of sparsity keys");
  }
  absl::StatusOr<YAML::Node> expanded = ExpandRecipe(node, path);  // recipe: MDGF -> its keys.
  if (!expanded.ok()) return expanded.status();
  return ParseSparsityKeys(*expanded, path);
}

namespace {

absl::StatusOr<SparsityConfig> ParseSparsityKeys(const YAML::Node& node, const std::string& path) {
  SparsityConfig config;
  KeyNodes nodes;
  bool n_qkv_given = false, m_qkv_given = false;
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    const std::string key = path + name;
    if (!Contains(KnownKeys(), name)) {
      return Error(
          kv.first, key,
          absl::StrCat("unknown key; known keys: ", kRecipeKey, ", ", absl::StrJoin(KnownKeys(), ", ")));
    }
    if (yaml_util::IsNullish(kv.second)) continue;  // null: the default (PyYAML dumps None as null).
    if (auto st = ReadKey(name, kv.second, key, &config, &nodes); !st.ok()) return st;
    n_qkv_given = n_qkv_given || name == "n_sparsity_qkv";
    m_qkv_given = m_qkv_given || name == "m_sparsity_qkv";
  }
  if (!n_qkv_given) config.nm_qkv.n = config.nm.n;
  if (!m_qkv_given) config.nm_qkv.m = config.nm.m;
  if (auto st = CheckCrossFields(config, nodes, node, path); !st.ok()) return st;
  if (config.IsDynamic()) config.sparsity_type = SparsityType::kUnstructured;
  return config;
}

}  // namespace

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

YAML::Node DynamicSparsityGroupToYaml(const DynamicSparsityGroup& g) {
  YAML::Node entry(YAML::NodeType::Map);
  entry["algorithm"] = ToString(g.algorithm);
  entry["sparsity"] = StepScheduleToYaml(g.sparsity);
  entry["drop_fraction"] = StepScheduleToYaml(g.drop_fraction);
  entry["init_method"] = ToString(g.init_method);
  YAML::Node update(YAML::NodeType::Map);
  update["freq"] = g.update.freq;
  update["start"] = g.update.start;
  update["stop"] = g.update.stop;
  update.SetStyle(YAML::EmitterStyle::Flow);
  entry["update"] = update;
  YAML::Node filter(YAML::NodeType::Sequence);
  for (const std::string& glob : g.param_filter) filter.push_back(glob);
  filter.SetStyle(YAML::EmitterStyle::Flow);
  entry["param_filter"] = filter;
  entry["balance_out_groups"] = g.balance_out_groups;
  entry["balance_in_groups"] = g.balance_in_groups;
  return entry;
}

YAML::Node SparsityConfigToYaml(const SparsityConfig& c) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& [key, text] : SparsityScalarTexts(c)) out[key] = text;
  out["phases"] = PhasesToYaml(c.phases);
  YAML::Node groups(YAML::NodeType::Sequence);
  for (const DynamicSparsityGroup& g : c.dynamic) groups.push_back(DynamicSparsityGroupToYaml(g));
  if (c.dynamic.empty()) groups.SetStyle(YAML::EmitterStyle::Flow);  // "dynamic: []".
  out["dynamic"] = groups;
  return out;
}

}  // namespace nmsparse
