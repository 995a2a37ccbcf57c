// The sparsity section (§1-§6, §7's groups in schemas/dynamic_groups.cc): its key table, the phase list, the
// three shapes of the section and the checks across its keys.
#include "schemas/sparsity_config.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/dynamic_groups.h"
#include "schemas/recipe.h"
#include "schemas/spec_key_builders.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using S = SparsityConfig;
using P = PhaseSpec;
using yaml_util::Error;

constexpr int64_t kMaxM = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxStartMultiple = 65536;
constexpr int64_t kMaxRefreshSteps = 1000000;

// Phases come as {dense|sparse|fine_tune: fraction} or as their canonical {kind: K, fraction: F}.
absl::StatusOr<PhaseSpec> ReadPhase(const YAML::Node& entry, const std::string& path) {
  if (!entry.IsMap()) {
    return Error(
        entry, path,
        "value " + yaml_util::Describe(entry) +
            " is not a phase: expected {dense|sparse|fine_tune: fraction} or {kind: K, fraction: F}");
  }
  PhaseSpec phase;
  if (entry["kind"]) {
    KeyNodes read;
    if (auto st = PhaseKeys().Read(entry, path, &phase, &read); !st.ok()) return st;
    if (!ReadNode(read, "fraction"))
      return Error(entry, path + ".fraction", "missing: a phase needs a fraction");
    return phase;
  }
  if (entry.size() != 1) {
    return Error(
        entry, path,
        "value " + yaml_util::Describe(entry) + " must have exactly one key: dense, sparse or fine_tune");
  }
  const YAML::Node key_node = entry.begin()->first;
  auto kind = yaml_util::ReadEnum(key_node, path, PhaseKinds().entries());
  if (!kind.ok()) return kind.status();
  phase.kind = *kind;
  if (auto st =
          PhaseKeys().Find("fraction")->read(entry.begin()->second, path + "." + key_node.Scalar(), &phase);
      !st.ok()) {
    return st;
  }
  return phase;
}

absl::StatusOr<std::vector<PhaseSpec>> ReadPhases(const YAML::Node& value, const std::string& path) {
  auto phases = ReadList<PhaseSpec>(value, path, "phases", ReadPhase);
  if (!phases.ok()) return phases.status();
  double sum = 0.0;
  for (const PhaseSpec& phase : *phases) sum += phase.fraction;
  if (!phases->empty() && std::fabs(sum - 1.0) > 1e-9) {
    return Error(value, path, "phase fractions sum to " + yaml_util::FormatDouble(sum) + ": must sum to 1");
  }
  return phases;
}

void WritePhases(const std::vector<PhaseSpec>& phases, const KeyInfo& self, SpecWriter* out) {
  WriteList(
      phases.size(), [&] { return PhasesToYaml(phases); }, self, out);
}

void WriteGroups(const std::vector<DynamicSparsityGroup>& groups, const KeyInfo& self, SpecWriter* out) {
  WriteList(
      groups.size(),
      [&] {
        YAML::Node list(YAML::NodeType::Sequence);
        for (const DynamicSparsityGroup& g : groups) list.push_back(DynamicSparsityGroupToYaml(g));
        return list;
      },
      self, out);
}

// A text or a list of texts over FF, Q, K, V, O, C.
absl::StatusOr<std::vector<SparsityLocation>> ReadLocations(const YAML::Node& value,
                                                            const std::string& path) {
  auto parts = ReadStringOrList(value, path);
  if (!parts.ok()) return parts.status();
  auto locations = ParseSparsityLocations(absl::StrJoin(*parts, ","));
  if (!locations.ok()) return Error(value, path, std::string(locations.status().message()));
  return locations;
}

void WriteLocations(const std::vector<SparsityLocation>& locations, const KeyInfo& self, SpecWriter* out) {
  out->Scalar(self, SparsityLocationsToString(locations));
}

// `sparsity.recipe`: input only, expanded into the keys it implies before the section is read.
SpecKey<S> RecipeNameKey() {
  SpecKey<S> key;
  key.info.name = kRecipeKey;
  key.info.kind = KeyKind::kEnum;
  for (const Recipe& r : Recipes()) key.info.names.push_back(r.name);
  key.info.input_only = true;
  key.read = [](const YAML::Node&, const std::string&, S*) { return absl::OkStatus(); };
  key.equal = [](const S&, const S&) { return true; };
  key.reset = [](S*) {};
  return key;
}

SpecKey<S> StartMultipleKey() {
  SpecKey<S> key =
      IntKey<S>("structure_decay_start_multiple", &S::structure_decay_start_multiple, 1, kMaxStartMultiple);
  auto read = key.read;
  key.read = [read](const YAML::Node& value, const std::string& path, S* s) -> absl::Status {
    if (absl::Status st = read(value, path, s); !st.ok()) return st;
    const int v = s->structure_decay_start_multiple;
    if ((v & (v - 1)) != 0) {
      return Error(value, path,
                   "value " + value.Scalar() + " is out of range: must be a power of two (1, 2, 4, 8, ...)");
    }
    return absl::OkStatus();
  };
  return key;
}

// n_sparsity, m_sparsity and their QKV twins: a part of an N:M.
SpecKey<S> NMKey(const std::string& name, int* (*part)(S*)) {
  return IntKey<S, int>(name, MakeRef<S, int>(part), 1, kMaxM);
}

absl::Status CheckNM(const NM& nm, const YAML::Node& n_node, const std::string& n_key,
                     const std::string& m_key) {
  if (nm.n > nm.m) {
    return Error(n_node, n_key,
                 absl::StrCat("value ", nm.n, " is out of range: must be <= ", m_key, " (", nm.m, ")"));
  }
  return absl::OkStatus();
}

// The checks across keys, each naming the key (and its line) that the file should change.
absl::Status CheckCrossKeys(const SparsityConfig& c, const KeyNodes& read, const YAML::Node& map,
                            const std::string& prefix) {
  const auto at = [&](const std::string& key) {
    const YAML::Node node = ReadNode(read, key);
    return node ? node : map;
  };
  if (auto st = CheckNM(c.nm, at("n_sparsity"), prefix + "n_sparsity", "m_sparsity"); !st.ok()) return st;
  if (auto st = CheckNM(c.nm_qkv, at("n_sparsity_qkv"), prefix + "n_sparsity_qkv", "m_sparsity_qkv");
      !st.ok()) {
    return st;
  }
  const double both = c.dense_fraction + c.fine_tune_fraction;
  if (both >= 1.0) {
    return Error(at("fine_tune_steps"), prefix + "fine_tune_steps",
                 absl::StrCat("value ", yaml_util::FormatDouble(c.fine_tune_fraction),
                              " is out of range: dense_steps + fine_tune_steps must be < 1 (got ",
                              yaml_util::FormatDouble(both), ")"));
  }
  if (!c.phases.empty() && (c.dense_fraction > 0.0 || c.fine_tune_fraction > 0.0)) {
    return Error(
        at("phases"), prefix + "phases",
        "cannot be combined with dense_steps / fine_tune_steps: give the dense and fine-tune parts as "
        "phases");
  }
  if (c.IsDynamic() && ReadNode(read, "sparsity_type") && c.sparsity_type != SparsityType::kUnstructured) {
    return Error(at("sparsity_type"), prefix + "sparsity_type",
                 "value " + ToString(c.sparsity_type) +
                     " cannot be combined with dynamic groups: dynamic sparsity (§7) is UNSTRUCTURED");
  }
  if (!c.phases.empty() && c.structure_decay_flag) {
    return Error(at("phases"), prefix + "phases",
                 "cannot be combined with structure_decay_flag: true (structure decay is defined over "
                 "dense_steps / fine_tune_steps, §4)");
  }
  if (ReadNode(read, "mask_refresh_steps") && c.sparsity_type != SparsityType::kHu24) {
    return Error(at("mask_refresh_steps"), prefix + "mask_refresh_steps",
                 "is a key of sparsity_type HU24 only, not " + ToString(c.sparsity_type));
  }
  if (ReadNode(read, "permutation_refresh_forwards") && c.sparsity_type != SparsityType::kBimask) {
    return Error(at("permutation_refresh_forwards"), prefix + "permutation_refresh_forwards",
                 "is a key of sparsity_type BIMASK only, not " + ToString(c.sparsity_type));
  }
  return absl::OkStatus();
}

// The keys of a sparsity map without a recipe key (ParseSparsityConfig expands it first).
absl::StatusOr<SparsityConfig> ParseSparsityKeys(const YAML::Node& node, const std::string& section,
                                                 const std::string& prefix) {
  SparsityConfig config;
  KeyNodes read;
  const std::string keys_path = prefix.empty() ? "" : section;
  if (auto st = SparsityKeys().Read(node, keys_path, &config, &read); !st.ok()) return st;
  if (!ReadNode(read, "n_sparsity_qkv")) config.nm_qkv.n = config.nm.n;
  if (!ReadNode(read, "m_sparsity_qkv")) config.nm_qkv.m = config.nm.m;
  if (auto st = CheckCrossKeys(config, read, node, prefix); !st.ok()) return st;
  if (config.IsDynamic()) config.sparsity_type = SparsityType::kUnstructured;
  return config;
}

// The names of the section's enums, built once.
struct SparsityEnumNames {
  EnumTable<SparsityType> types{
      {"DENSE", SparsityType::kDense}, {"STRUCTURED_NM", SparsityType::kStructuredNM},
      {"SRSTE", SparsityType::kSrste}, {"UNSTRUCTURED", SparsityType::kUnstructured},
      {"SSTE", SparsityType::kSste},   {"STEP", SparsityType::kStep},
      {"HU24", SparsityType::kHu24},   {"BIMASK", SparsityType::kBimask}};
  EnumTable<DecayType> decay_types{
      {"STEP", DecayType::kStep}, {"LINEAR", DecayType::kLinear}, {"EXP", DecayType::kExp}};
  EnumTable<StructureDecayType> structure_decay_types{{"SPARSIFY", StructureDecayType::kSparsify},
                                                      {"FINE", StructureDecayType::kFine},
                                                      {"DENSIFY", StructureDecayType::kDensify}};
  EnumTable<SparseDim> sparse_dims{{"ROW", SparseDim::kRow}, {"COL", SparseDim::kCol}};
  EnumTable<PhaseKind> phase_kinds{
      {"DENSE", PhaseKind::kDense}, {"SPARSE", PhaseKind::kSparse}, {"FINE_TUNE", PhaseKind::kFineTune}};
  EnumTable<SrsteLossScale> srste_loss_scales{{"EXACT", SrsteLossScale::kExact},
                                              {"REFERENCE", SrsteLossScale::kReference}};
};

}  // namespace

const EnumTable<SparsityType>& SparsityTypes() { return Instance<SparsityEnumNames>().types; }
const EnumTable<DecayType>& DecayTypes() { return Instance<SparsityEnumNames>().decay_types; }
const EnumTable<StructureDecayType>& StructureDecayTypes() {
  return Instance<SparsityEnumNames>().structure_decay_types;
}
const EnumTable<SparseDim>& SparseDims() { return Instance<SparsityEnumNames>().sparse_dims; }
const EnumTable<PhaseKind>& PhaseKinds() { return Instance<SparsityEnumNames>().phase_kinds; }
const EnumTable<SrsteLossScale>& SrsteLossScales() { return Instance<SparsityEnumNames>().srste_loss_scales; }

const KeyTable<PhaseSpec>& PhaseKeys() {
  static const auto* keys = new KeyTable<P>({
      EnumKey<P>("kind", &P::kind, PhaseKinds())
          .Doc("DENSE (raw weights), SPARSE (the recipe), FINE_TUNE (hard mask, D = 0, still "
               "straight-through)."),
      NumberKey<P>("fraction", &P::fraction, 0.0, 1.0, /*max_open=*/false, /*min_open=*/true)
          .Doc("Of total epochs.")
          .Required(),
  });
  return *keys;
}

const KeyTable<SparsityConfig>& SparsityKeys() {
  static const auto* keys = new KeyTable<S>({
      RecipeNameKey().Doc(
          "Named recipe, a shorthand that expands into the keys below (docs/sweeps.md): DENSE = "
          "sparsity_type DENSE; STE = STRUCTURED_NM, decay_type STEP, no structure decay; SRSTE = "
          "sparsity_type SRSTE; MDGF = STRUCTURED_NM, decay_type EXP (or LINEAR when given), no "
          "structure decay; SDGF = STRUCTURED_NM, decay_type STEP, structure_decay_flag true "
          "(structure_decay_type as given); SSTE = sparsity_type SSTE (S-STE, 2:4 only); STEP = "
          "sparsity_type STEP (Adam-aware 2:4 with AdamW, step_switch_* and step_z_option); HU24 = "
          "sparsity_type HU24 (Hu et al. 2024, 2:4 only), srste_lambda 0.001 and a dense last sixth (phases) "
          "unless given; SRIGL = one dynamic group of algorithm SRIGL (constant fan-in per neuron, not N:M; "
          "§7.1; give its sparsity, no N:M keys); BIMASK = sparsity_type BIMASK (Bi-Mask, Zhang et al. "
          "2023), all four linears of "
          "every block (sparsity_loc FFQKVO) unless given. An explicit key "
          "that disagrees with the recipe is an "
          "error naming both. Case-insensitive; never stored: runs keep the expanded keys, so a "
          "recipe and its keys hash alike."),
      EnumKey<S>("sparsity_type", &S::sparsity_type, SparsityTypes())
          .Doc("Recipe family (§2); dynamic groups (§7) imply UNSTRUCTURED. Case-insensitive; "
               "canonical form upper case.")
          .Validated(),
      NMKey("n_sparsity", [](S* s) { return &s->nm.n; })
          .Doc("N of N:M (kept weights per group) for FF, O and C; <= m_sparsity.")
          .Validated(),
      NMKey("m_sparsity", [](S* s) { return &s->nm.m; })
          .Doc("M of N:M (group size) for FF, O and C. Every sparsified layer's numel must be a "
               "multiple of M for every N:M it will use (all structure-decay stages).")
          .Validated(),
      NMKey("n_sparsity_qkv", [](S* s) { return &s->nm_qkv.n; })
          .Doc("N for Q, K and V; defaults to n_sparsity.")
          .NoDefault()
          .Validated(),
      NMKey("m_sparsity_qkv", [](S* s) { return &s->nm_qkv.m; })
          .Doc("M for Q, K and V; defaults to m_sparsity.")
          .NoDefault()
          .Validated(),
      EnumKey<S>("decay_type", &S::decay_type, DecayTypes())
          .Doc("Mask decay D(j) of the pruned weights: STEP (D = 0, plain STE), LINEAR (max(1 - beta "
               "j, 0), MDGF-Linear), EXP (exp(-beta j), MDGF-Exponential). Ignored by SRSTE."),
      NumberKey<S>("decay_coef", &S::decay_coef, 0.0)
          .Doc("beta, per optimizer step, counted from the first step of the sparse phase."),
      BoolKey<S>("structure_decay_flag", &S::structure_decay_flag)
          .Doc("SDGF: change the N:M target by epoch (§4).")
          .Validated(),
      EnumKey<S>("structure_decay_type", &S::structure_decay_type, StructureDecayTypes())
          .Doc("SPARSIFY (SDGF-Stepwise: (M-1):M, M/2:M, ... N:M), FINE (SDGF-Geometric: N*S:M*S ... "
               "N:M), DENSIFY (N:M*S ... N:M).")
          .Validated(),
      StartMultipleKey()
          .Doc("S of the FINE/DENSIFY tables: a power of two; 8 gives four stages (8:64, 4:32, 2:16, "
               "1:8 for 1:8), 16 the paper's 16:128 start.")
          .Validated(),
      NumberKey<S>("dense_steps", &S::dense_fraction, 0.0, 1.0, /*max_open=*/true)
          .Doc("Fraction of epochs trained dense first (int(fraction * epochs) epochs), despite the "
               "name (§3).")
          .Validated(),
      NumberKey<S>("fine_tune_steps", &S::fine_tune_fraction, 0.0, 1.0, /*max_open=*/true)
          .Doc("Fraction of epochs at the end with a hard mask (epochs > T - int(fraction * T)); "
               "dense_steps + fine_tune_steps < 1.")
          .Validated(),
      MemberKey<S, std::vector<SparsityLocation>>("sparsity_loc", KeyKind::kLocations, &S::locations,
                                                  ReadLocations, WriteLocations)
          .Names(SparsityLocations().Names())
          .Doc("Where sparsity goes (§5): letters/words over FF (both MLP linears), Q, K, V (blocks of "
               "the fused qkv weight), O (attention output projection), C (convolutions: the patch "
               "embedding), case-insensitive, e.g. FF, FFQKV, \"FF,Q,K,V\", or a list [FF, Q].")
          .Validated(),
      EnumKey<S>("sparse_dim", &S::sparse_dim, SparseDims())
          .Doc("Group direction for linears: ROW (along the input dimension, the 2:4 tensor-core "
               "layout) or COL.")
          .Validated(),
      NumberKey<S>("prune_rate", &S::prune_rate, 0.0, 1.0, /*max_open=*/true)
          .Doc("UNSTRUCTURED: fraction pruned per layer by magnitude (keep int((1 - rate) * numel))."),
      NumberKey<S>("srste_lambda", &S::srste_lambda, 0.0)
          .Doc("SR-STE lambda: the gradient gets + lambda * (1 - mask) * W. HU24: its masked decay, added "
               "after clipping, before the optimizer's update. BIMASK: added inside the layer's backward "
               "once per sample, so a [B, T, C] input multiplies it by B (the authors' ViT)."),
      OmittedAtDefault(
          EnumKey<S>("srste_decay_under_loss_scale", &S::srste_decay_under_loss_scale, SrsteLossScales()))
          .Doc("SR-STE under fp16 loss scaling: EXACT (the term above, whatever the loss scale) or "
               "REFERENCE (the reference's: the term joins the still-scaled gradient, so unscaling divides "
               "it by the loss scale). Written only when REFERENCE."),
      OmittedAtDefault(NumberKey<S>("step_switch_min", &S::step_switch_min, 0.0, 1.0))
          .Doc("STEP: T_min, the fraction of the run's optimizer steps before which the second moment's "
               "settling does not switch to sparse (T_min = floor(fraction * steps), the authors' "
               "steps // 10 at 0.1). Written only when not 0.1.")
          .Validated(),
      OmittedAtDefault(NumberKey<S>("step_switch_max", &S::step_switch_max, 0.0, 1.0))
          .Doc("STEP: T_max, the fraction of the run's optimizer steps after which it switches to sparse "
               "whatever the test says (the authors' steps // 2 at 0.5); >= step_switch_min. Written only "
               "when not 0.5.")
          .Validated(),
      OmittedAtDefault(IntKey<S>("step_z_option", &S::step_z_option, 1, 2))
          .Doc("STEP: Z_t from |v_t - v_{t-1}| over the sparse weights: 1 its mean, 2 its geometric mean "
               "(the authors' option). Written only when 2."),
      OmittedAtDefault(IntKey<S>("mask_refresh_steps", &S::mask_refresh_steps, 1, kMaxRefreshSteps))
          .Doc("HU24 only: the transposable mask is recomputed from |W| at optimizer steps k, 2k, 3k, ... "
               "(1-based) and held in between; all ones before step k (the authors' DeiT schedule, k = "
               "10). Written only when not 10.")
          .Validated(),
      OmittedAtDefault(
          IntKey<S>("permutation_refresh_forwards", &S::permutation_refresh_forwards, 1, kMaxRefreshSteps))
          .Doc("BIMASK only: the backward mask's output-row permutation is searched (best of 100 random "
               "candidates) at every layer's forward calls 0, I, 2I, ..., counting every forward, "
               "evaluation included, as the authors' code (I = 100). Written only when not 100.")
          .Validated(),
      MemberKey<S, std::vector<PhaseSpec>>("phases", KeyKind::kPhases, &S::phases, ReadPhases, WritePhases)
          .Keys(PhaseKeys().Infos())
          .Doc("A general phase list replacing dense_steps/fine_tune_steps (not combined with them nor "
               "with structure decay); fractions sum to 1, e.g. [{sparse: 0.8}, {dense: 0.2}] (sparse "
               "first, then dense).")
          .Validated(),
      MemberKey<S, std::vector<DynamicSparsityGroup>>("dynamic", KeyKind::kSectionList, &S::dynamic,
                                                      ReadDynamicGroups, WriteGroups)
          .Keys(DynamicGroupKeys().Infos())
          .Doc("Dynamic unstructured sparsity groups (§7); non-empty means sparsity_type UNSTRUCTURED "
               "(the N:M keys are then unused). Canonical form of the inline and list shapes of the "
               "section.")
          .Validated(),
  });
  return *keys;
}

bool operator==(const PhaseSpec& a, const PhaseSpec& b) { return PhaseKeys().Equal(a, b); }
bool operator==(const SparsityConfig& a, const SparsityConfig& b) { return SparsityKeys().Equal(a, b); }

std::string ToString(SparsityType type) { return SparsityTypes().Name(type); }
std::string ToString(DecayType type) { return DecayTypes().Name(type); }
std::string ToString(StructureDecayType type) { return StructureDecayTypes().Name(type); }
std::string ToString(SparseDim dim) { return SparseDims().Name(dim); }
std::string ToString(PhaseKind kind) { return PhaseKinds().Name(kind); }

bool IsSparsityKey(const std::string& key) {
  return SparsityKeys().Find(key) != nullptr || DynamicGroupKeys().Find(key) != nullptr;
}

absl::StatusOr<SparsityConfig> ParseSparsityConfig(const YAML::Node& node, const std::string& path) {
  SparsityConfig config;
  if (yaml_util::IsNullish(node)) return config;
  const std::string section = path.empty() ? "sparsity" : path.substr(0, path.size() - (path.back() == '.'));
  if (node.IsSequence()) {  // A list of dynamic groups.
    auto groups = ReadDynamicGroups(node, section);
    if (!groups.ok()) return groups.status();
    config.dynamic = *groups;
    config.sparsity_type = SparsityType::kUnstructured;
    return config;
  }
  if (!node.IsMap()) {
    return Error(node, section, "value " + yaml_util::Describe(node) + " is not a map of sparsity keys");
  }
  absl::StatusOr<YAML::Node> expanded = ExpandRecipe(node, path);  // recipe: MDGF -> its keys.
  if (!expanded.ok()) return expanded.status();
  for (const auto& kv : *expanded) {  // recipe: SRIGL is a dynamic group.
    if (DynamicGroupKeys().Find(kv.first.as<std::string>()) != nullptr)
      return ParseInlineGroup(*expanded, section, path);
  }
  return ParseSparsityKeys(*expanded, section, path);
}

YAML::Node PhasesToYaml(const std::vector<PhaseSpec>& phases) {
  YAML::Node out(YAML::NodeType::Sequence);
  for (const PhaseSpec& p : phases) {
    NodeWriter entry;
    PhaseKeys().Write(p, &entry);
    out.push_back(entry.root());
  }
  out.SetStyle(YAML::EmitterStyle::Flow);  // "phases: []" / "phases: [{kind: SPARSE, fraction: 0.8}]".
  return out;
}

YAML::Node SparsityConfigToYaml(const SparsityConfig& config) {
  NodeWriter out;
  SparsityKeys().Write(config, &out);
  return out.root();
}

bool IsNMSparsity(SparsityType type) {
  switch (type) {
    case SparsityType::kDense:
    case SparsityType::kUnstructured:
      return false;
    case SparsityType::kStructuredNM:
    case SparsityType::kSrste:
    case SparsityType::kSste:
    case SparsityType::kStep:
    case SparsityType::kHu24:
    case SparsityType::kBimask:
      return true;
  }
  return false;
}

bool FollowsStructureDecay(SparsityType type) { return type == SparsityType::kStructuredNM; }

}  // namespace nmsparse
