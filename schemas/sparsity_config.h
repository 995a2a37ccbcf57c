// The sparsity section of an experiment spec: N:M recipes, phases and locations
// (docs/sparsity-method.md §1-§6) and dynamic unstructured sparsity groups (§7). Plain C++: used by
// the trainer's engine, the coordinator's validation and nmctl alike, so it depends on neither LibTorch nor
// protobuf.
#ifndef NMSPARSE_SCHEMAS_SPARSITY_CONFIG_H_
#define NMSPARSE_SCHEMAS_SPARSITY_CONFIG_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/enum_table.h"
#include "schemas/step_schedule.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

// kSste: S-STE, the 2:4 soft threshold with a scale frozen at initialisation (docs/sparsity-method.md §12).
// kStep: STEP, Adam-aware 2:4 that switches to sparse once Adam's second moment settles and then freezes it
// (docs/sparsity-method.md §13).
// kHu24: Hu et al. 2024, transposable 2:4 held between refreshes, MVUE weight gradient, masked decay (§12).
// kBimask: Bi-Mask (Zhang et al. 2023), an N:M forward mask and a permutation-searched backward mask (§14).
enum class SparsityType { kDense, kStructuredNM, kSrste, kUnstructured, kSste, kStep, kHu24, kBimask };
enum class DecayType { kStep, kLinear, kExp };

// Whether a run of this type keeps N of every M weights, so that sparsity.nm and nm_qkv apply (dense and
// unstructured runs ignore them).
bool IsNMSparsity(SparsityType type);
// Whether its N:M steps through the structure decay's stages (§3, §4). The other N:M recipes hold their
// target from their first sparse step and never harden the mask in a fine-tune.
bool FollowsStructureDecay(SparsityType type);
enum class StructureDecayType { kSparsify, kFine, kDensify };
enum class SparseDim { kRow, kCol };
enum class PhaseKind { kDense, kSparse, kFineTune };
// SR-STE's decay term under fp16 loss scaling (docs/sparsity-method.md §2): kExact adds lambda*(1-mask)*W to
// the true gradient; kReference adds it to the scaled gradient, as the reference does, so that unscaling
// divides it by the loss scale.
enum class SrsteLossScale { kExact, kReference };

// A location that can be sparsified (§5). FF is both MLP linears; O the attention output projection; C convs.
enum class SparsityLocation { kFF, kQ, kK, kV, kO, kC };

struct NM {
  int n = 2;
  int m = 4;
  friend bool operator==(const NM& a, const NM& b) { return a.n == b.n && a.m == b.m; }
  friend bool operator!=(const NM& a, const NM& b) { return !(a == b); }
};

struct PhaseSpec {
  PhaseKind kind = PhaseKind::kSparse;
  double fraction = 1.0;  // Of total epochs.
};

// Dynamic unstructured sparsity (§7), mirroring v1.DynamicSparsityGroup / v1.UpdateSchedule.
// kSrigl: SRigL (Lasby et al., ICLR 2024), RigL with a constant fan-in per output neuron and neuron ablation
// (docs/sparsity-method.md §7.1). Not M-grouped N:M.
enum class DynamicAlgorithm { kStatic, kGmp, kSet, kRigl, kSrigl };
enum class InitMethod { kRandom, kTopk, kFromZeros };

// Masks exist from optimizer step `start` on (dense before). After optimizer step s they change when s is an
// update step: s > start, (s - start) % freq == 0 and (stop == 0 or s < stop).
struct UpdateSchedule {
  int64_t freq = 100;
  int64_t start = 0;
  int64_t stop = 0;  // 0: never stops.

  bool IsUpdateStep(int64_t step) const;
};

struct DynamicSparsityGroup {
  DynamicAlgorithm algorithm = DynamicAlgorithm::kStatic;
  StepSchedule sparsity;                                     // Fraction of weights pruned.
  StepSchedule drop_fraction = StepSchedule::Constant(0.3);  // SET / RigL: fraction of active weights
                                                             // dropped (and regrown) per update.
  InitMethod init_method = InitMethod::kRandom;
  UpdateSchedule update;
  std::vector<std::string> param_filter;  // Globs (fnmatch, '*' crosses dots); empty: the default filter.
  int balance_out_groups = 0;             // 0/1: off.
  int balance_in_groups = 0;
  // SRIGL only (§7.1), the authors' ViT defaults: masks fixed, and the drop fraction (a constant is alpha,
  // annealed by their cosine) at 0, from t_end x the run's optimizer steps unless update.stop says; the dense
  // gradient averaged over grad_accumulation_n steps up to an update; neurons ablated below
  // min_salient_weights_per_neuron x fan-in salient weights, except in no_ablation_filter's parameters.
  double t_end = 0.75;
  int grad_accumulation_n = 8;
  bool dynamic_ablation = true;
  double min_salient_weights_per_neuron = 0.95;
  std::vector<std::string> no_ablation_filter = {"head.*"};
};

bool operator==(const UpdateSchedule& a, const UpdateSchedule& b);
bool operator==(const DynamicSparsityGroup& a, const DynamicSparsityGroup& b);

struct SparsityConfig {
  SparsityType sparsity_type = SparsityType::kDense;
  NM nm{2, 4};      // n_sparsity:m_sparsity, for FF, O and C.
  NM nm_qkv{2, 4};  // n_sparsity_qkv:m_sparsity_qkv, for Q, K and V (defaults to nm when not given).
  DecayType decay_type = DecayType::kStep;
  double decay_coef = 2e-4;
  bool structure_decay_flag = false;
  StructureDecayType structure_decay_type = StructureDecayType::kSparsify;
  int structure_decay_start_multiple = 8;
  double dense_fraction = 0.0;                                        // YAML key dense_steps.
  double fine_tune_fraction = 0.0;                                    // YAML key fine_tune_steps.
  std::vector<SparsityLocation> locations = {SparsityLocation::kFF};  // YAML key sparsity_loc.
  SparseDim sparse_dim = SparseDim::kRow;
  double prune_rate = 0.5;  // UNSTRUCTURED only.
  double srste_lambda = 2e-4;
  SrsteLossScale srste_decay_under_loss_scale = SrsteLossScale::kExact;  // fp16 only.
  int mask_refresh_steps = 10;  // HU24 only: its mask is recomputed at optimizer steps k, 2k, ... (1-based).
  // BIMASK only: the backward mask's permutation is searched at the layer's forward calls 0, I, 2I, ...
  // (0-based, every forward counted, evaluation included, as the authors' counter; I = 100).
  int permutation_refresh_forwards = 100;
  std::vector<PhaseSpec> phases;  // Empty: dense_fraction / fine_tune_fraction decide.
  // STEP only (§13): the switch test's bounds T_min and T_max as fractions of the run's optimizer steps, and
  // Z_t's mean of |v_t - v_{t-1}| (1: arithmetic, 2: geometric), the authors' `clipping` and `option`.
  double step_switch_min = 0.1;
  double step_switch_max = 0.5;
  int step_z_option = 1;
  // §7: non-empty for dynamic unstructured runs (sparsity_type UNSTRUCTURED); the N:M keys are then unused.
  std::vector<DynamicSparsityGroup> dynamic;

  bool IsDynamic() const { return !dynamic.empty(); }
  bool HasLocation(SparsityLocation loc) const;
};

bool operator==(const PhaseSpec& a, const PhaseSpec& b);
bool operator==(const SparsityConfig& a, const SparsityConfig& b);
inline bool operator!=(const SparsityConfig& a, const SparsityConfig& b) { return !(a == b); }

// Parses the sparsity keys of `node` (a YAML map) with the reference's key names; values are
// case-insensitive. `path` prefixes key names in errors (e.g. "sparsity."). Unknown keys, wrong types and
// out-of-range values are InvalidArgument errors naming the key, the value, the allowed range and the line.
//
// Dynamic sparsity (§7) comes in three shapes, all giving sparsity_type UNSTRUCTURED and `dynamic` groups:
//   sparsity: {algorithm: rigl, sparsity: 0.9, update: {freq: 100}, ...}        # one group inline
//   sparsity: [{param_filter: "blocks.*.mlp.*", algorithm: rigl, ...}, {...}]   # a list of groups
//   sparsity: {sparsity_type: UNSTRUCTURED, dynamic: [{...}, ...], ...}          # canonical / wire form
// Group keys: algorithm (static|gmp|set|rigl, default static), sparsity (a schedule, required),
// drop_fraction (a schedule, default 0.3), init_method (random|topk|from_zeros), update {freq (>= 1, default
// 100), start, stop}, param_filter (a glob or a list of globs), balance_out_groups, balance_in_groups.
absl::StatusOr<SparsityConfig> ParseSparsityConfig(const YAML::Node& node, const std::string& path);

// True for the keys ParseSparsityConfig understands (so that a flat reference config can route them).
bool IsSparsityKey(const std::string& key);

// Canonical YAML map of every key with its value (defaults filled in), in a fixed order; parses back to an
// equal config. Enum values are upper case as in the reference.
YAML::Node SparsityConfigToYaml(const SparsityConfig& config);

// `phases` as a flow-style YAML list; one dynamic group (§7) as a YAML map.
YAML::Node PhasesToYaml(const std::vector<PhaseSpec>& phases);
YAML::Node DynamicSparsityGroupToYaml(const DynamicSparsityGroup& group);

// The keys of the sparsity section, of a phase ({kind, fraction}), of a dynamic group and of its update
// schedule, in canonical order (schemas/spec_keys.h).
const KeyTable<SparsityConfig>& SparsityKeys();
const KeyTable<PhaseSpec>& PhaseKeys();
const KeyTable<DynamicSparsityGroup>& DynamicGroupKeys();
const KeyTable<UpdateSchedule>& UpdateScheduleKeys();

// The names of each enum, for parsing and printing alike (ToString is their Name).
const EnumTable<SparsityType>& SparsityTypes();
const EnumTable<DecayType>& DecayTypes();
const EnumTable<StructureDecayType>& StructureDecayTypes();
const EnumTable<SparseDim>& SparseDims();
const EnumTable<PhaseKind>& PhaseKinds();
const EnumTable<SrsteLossScale>& SrsteLossScales();
const EnumTable<SparsityLocation>& SparsityLocations();  // In canonical order: FF, Q, K, V, O, C.
const EnumTable<DynamicAlgorithm>& DynamicAlgorithms();
const EnumTable<InitMethod>& InitMethods();

std::string ToString(SparsityType type);
std::string ToString(DecayType type);
std::string ToString(StructureDecayType type);
std::string ToString(SparsityLocation location);
std::string ToString(SparseDim dim);
std::string ToString(PhaseKind kind);
std::string ToString(DynamicAlgorithm algorithm);
std::string ToString(InitMethod method);

// Parses a sparsity_loc value: letters/words over FF, Q, K, V, O, C, optionally separated by commas, spaces
// or '+' ("FF", "FFQKV", "FF,Q,K,V"), case-insensitive. Result in canonical order FF, Q, K, V, O, C, without
// duplicates. InvalidArgument names the offending text.
absl::StatusOr<std::vector<SparsityLocation>> ParseSparsityLocations(const std::string& text);

// Canonical sparsity_loc text: the locations in canonical order joined by commas, e.g. "FF,Q,K,V".
std::string SparsityLocationsToString(const std::vector<SparsityLocation>& locations);

// The N:M a location uses: nm_qkv for Q, K and V, nm for FF, O and C (§5).
NM TargetFor(const SparsityConfig& config, SparsityLocation location);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SPARSITY_CONFIG_H_
