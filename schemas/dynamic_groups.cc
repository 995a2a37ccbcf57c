// Dynamic sparsity groups (§7): the key tables of a group and of its update schedule, their readers, and
// the inline shape of the sparsity section.
#include "schemas/dynamic_groups.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/spec_key_builders.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using G = DynamicSparsityGroup;
using U = UpdateSchedule;
using yaml_util::Error;

constexpr int64_t kMaxStep = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxBalanceGroups = 1 << 20;

// A step schedule (schemas/step_schedule.h): a number or a flow map.
SpecKey<G> ScheduleKey(const std::string& name, StepSchedule G::*member) {
  return MemberKey<G, StepSchedule>(name, KeyKind::kSchedule, member, ParseStepSchedule,
                                    [](const StepSchedule& s, const KeyInfo& self, SpecWriter* out) {
                                      out->Collection(self, StepScheduleToYaml(s));
                                    })
      .Keys(StepScheduleKeys().Infos());
}

// The update schedule, a flow map; stop, when not 0, after start.
SpecKey<G> UpdateKey() {
  SpecKey<G> key = SectionKey<G>("update", &G::update, UpdateScheduleKeys(), /*flow=*/true);
  auto read = key.read;
  key.read = [read](const YAML::Node& value, const std::string& path, G* g) -> absl::Status {
    if (absl::Status st = read(value, path, g); !st.ok()) return st;
    if (g->update.stop != 0 && g->update.stop <= g->update.start) {
      return Error(value["stop"], path + ".stop",
                   absl::StrCat("value ", g->update.stop, " is out of range: must be > start (",
                                g->update.start, ") or 0 (never stops)"));
    }
    return absl::OkStatus();
  };
  return key;
}

// A glob or a list of globs, none empty.
absl::StatusOr<std::vector<std::string>> ReadFilter(const YAML::Node& value, const std::string& path) {
  auto globs = ReadStringOrList(value, path);
  if (!globs.ok()) return globs.status();
  for (size_t i = 0; i < globs->size(); ++i) {
    if (!(*globs)[i].empty()) continue;
    const bool list = value.IsSequence();
    return Error(list ? value[i] : value, list ? absl::StrCat(path, "[", i, "]") : path,
                 "value '' is empty: must be a glob such as blocks.*.mlp.*");
  }
  return globs;
}

void WriteFilter(const std::vector<std::string>& globs, const KeyInfo& self, SpecWriter* out) {
  WriteList(
      globs.size(), [&] { return StringList(globs, /*flow=*/true); }, self, out);
}

// The keys of a group, read from `keys` (the group's map, or the inline section's keys without
// sparsity_type); `node` is where the group is written.
absl::StatusOr<DynamicSparsityGroup> ReadGroupKeys(const YAML::Node& keys, const YAML::Node& node,
                                                   const std::string& path) {
  DynamicSparsityGroup group;
  KeyNodes read;
  if (absl::Status st = DynamicGroupKeys().Read(keys, path, &group, &read); !st.ok()) return st;
  if (!ReadNode(read, "sparsity")) {
    return Error(node, path + ".sparsity",
                 "missing: a dynamic sparsity group needs its sparsity (a number in [0, 1] or a schedule)");
  }
  if (group.algorithm != DynamicAlgorithm::kSrigl) {
    for (const char* name : {"t_end", "grad_accumulation_n", "dynamic_ablation",
                             "min_salient_weights_per_neuron", "no_ablation_filter"}) {
      if (const YAML::Node at = ReadNode(read, name)) {
        return Error(at, path + "." + name,
                     "is a key of algorithm SRIGL only, not " + ToString(group.algorithm));
      }
    }
  }
  return group;
}

// Whether an inline section names algorithm SRIGL (any case).
bool IsSrigl(const YAML::Node& node) {
  const YAML::Node a = node["algorithm"];
  return a && a.IsScalar() && yaml_util::Upper(a.Scalar()) == "SRIGL";
}

// One group; `path` is its key path ("sparsity.dynamic[0]").
absl::StatusOr<DynamicSparsityGroup> ReadGroup(const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) {
    return Error(node, path,
                 "value " + yaml_util::Describe(node) +
                     " is not a dynamic sparsity group: expected {algorithm: ..., sparsity: ..., ...}");
  }
  return ReadGroupKeys(node, node, path);
}

// The names of a group's enums, built once.
struct GroupEnumNames {
  EnumTable<DynamicAlgorithm> algorithms{{"STATIC", DynamicAlgorithm::kStatic},
                                         {"GMP", DynamicAlgorithm::kGmp},
                                         {"SET", DynamicAlgorithm::kSet},
                                         {"RIGL", DynamicAlgorithm::kRigl},
                                         {"SRIGL", DynamicAlgorithm::kSrigl}};
  EnumTable<InitMethod> init_methods{
      {"RANDOM", InitMethod::kRandom}, {"TOPK", InitMethod::kTopk}, {"FROM_ZEROS", InitMethod::kFromZeros}};
};

}  // namespace

const EnumTable<DynamicAlgorithm>& DynamicAlgorithms() { return Instance<GroupEnumNames>().algorithms; }
const EnumTable<InitMethod>& InitMethods() { return Instance<GroupEnumNames>().init_methods; }

const KeyTable<UpdateSchedule>& UpdateScheduleKeys() {
  static const auto* keys = new KeyTable<U>({
      IntKey<U>("freq", &U::freq, 1, kMaxStep),
      IntKey<U>("start", &U::start, 0, kMaxStep),
      IntKey<U>("stop", &U::stop, 0, kMaxStep).Doc("0: never stops."),
  });
  return *keys;
}

const KeyTable<DynamicSparsityGroup>& DynamicGroupKeys() {
  static const auto* keys = new KeyTable<G>({
      EnumKey<G>("algorithm", &G::algorithm, DynamicAlgorithms())
          .Doc("STATIC (mask fixed at start), GMP (re-prune to the scheduled level by |W| on update steps), "
               "SET "
               "(drop the smallest active |W|, regrow at random), RIGL (drop the smallest active |W|, regrow "
               "where the dense |gradient| is largest), SRIGL (RigL with a constant fan-in per output neuron "
               "and "
               "neuron ablation, Lasby et al. 2024: not M-grouped N:M; counts steps from 1 and updates "
               "after optimizer step u when u % update.freq == 0 and u < T_end). Case-insensitive.")
          .Validated(),
      ScheduleKey("sparsity", &G::sparsity)
          .Doc("Fraction of the group's weights pruned (required).")
          .Required(),
      ScheduleKey("drop_fraction", &G::drop_fraction)
          .Doc("SET/RIGL/SRIGL: fraction of the active weights dropped and regrown per update (default 0.3; "
               "RigL usually a cosine decay). SRIGL: a constant is the authors' alpha, annealed as "
               "alpha/2 (1 + cos(pi u / T_end)); a schedule is used as written."),
      EnumKey<G>("init_method", &G::init_method, InitMethods())
          .Doc("Initial mask at update.start: RANDOM, TOPK (largest |W|), FROM_ZEROS (weights that are "
               "already "
               "zero are pruned first, the rest at random)."),
      UpdateKey().Doc(
          "Masks exist from step start on (dense before) and change after optimizer step s when s > start, "
          "(s - start) % freq == 0 and (stop == 0 or s < stop)."),
      MemberKey<G, std::vector<std::string>>("param_filter", KeyKind::kGlobs, &G::param_filter, ReadFilter,
                                             WriteFilter)
          .Doc(
              "A glob (fnmatch; '*' crosses dots) or list of globs over parameter names; absent/empty: every "
              "parameter with more than one dimension whose name contains none of embedding, norm, lm_head, "
              "pos_embed, cls_token. Each glob must match a parameter. With a list of groups, the first "
              "group "
              "whose filter matches a parameter takes it.")
          .Validated(),
      IntKey<G>("balance_out_groups", &G::balance_out_groups, 0, kMaxBalanceGroups)
          .Doc("Run drop, grow and top-k independently in N equal groups of output rows (e.g. one per "
               "attention "
               "head); 0/1: off."),
      IntKey<G>("balance_in_groups", &G::balance_in_groups, 0, kMaxBalanceGroups)
          .Doc("Likewise over input columns."),
      OmittedAtDefault(NumberKey<G>("t_end", &G::t_end, 0.0, 1.0, false, /*min_open=*/true))
          .Doc("SRIGL only: T_end as a fraction of the run's optimizer steps, int(t_end x steps) (the "
               "authors' 0.75), when update.stop is 0; no update from T_end on."),
      OmittedAtDefault(IntKey<G>("grad_accumulation_n", &G::grad_accumulation_n, 1, kMaxStep))
          .Doc("SRIGL only: the dense gradient that scores growth is the mean over this many optimizer steps "
               "up to each update (the authors' 8)."),
      OmittedAtDefault(BoolKey<G>("dynamic_ablation", &G::dynamic_ablation))
          .Doc("SRIGL only: ablate (zero) output neurons with too few salient weights (the authors' true)."),
      OmittedAtDefault(
          NumberKey<G>("min_salient_weights_per_neuron", &G::min_salient_weights_per_neuron, 0.0, 1.0))
          .Doc("SRIGL only: a neuron is ablated below max(1, int(this x fan-in)) salient weights (the "
               "authors' 0.95 for ViT)."),
      OmittedAtDefault(MemberKey<G, std::vector<std::string>>("no_ablation_filter", KeyKind::kGlobs,
                                                              &G::no_ablation_filter, ReadFilter,
                                                              WriteFilter))
          .Doc("SRIGL only: globs of parameters whose neurons are never ablated (the authors' classifier "
               "head: head.*); need not match."),
  });
  return *keys;
}

bool UpdateSchedule::IsUpdateStep(int64_t step) const {
  return step > start && freq > 0 && (step - start) % freq == 0 && (stop == 0 || step < stop);
}

bool operator==(const UpdateSchedule& a, const UpdateSchedule& b) { return UpdateScheduleKeys().Equal(a, b); }

bool operator==(const DynamicSparsityGroup& a, const DynamicSparsityGroup& b) {
  return DynamicGroupKeys().Equal(a, b);
}

std::string ToString(DynamicAlgorithm algorithm) { return DynamicAlgorithms().Name(algorithm); }
std::string ToString(InitMethod method) { return InitMethods().Name(method); }

YAML::Node DynamicSparsityGroupToYaml(const DynamicSparsityGroup& group) {
  NodeWriter out;
  DynamicGroupKeys().Write(group, &out);
  return out.root();
}

absl::StatusOr<std::vector<DynamicSparsityGroup>> ReadDynamicGroups(const YAML::Node& value,
                                                                    const std::string& path) {
  return ReadList<DynamicSparsityGroup>(value, path, "dynamic sparsity groups", ReadGroup);
}

absl::StatusOr<SparsityConfig> ParseInlineGroup(const YAML::Node& node, const std::string& path,
                                                const std::string& prefix) {
  const std::vector<std::string> group_keys = DynamicGroupKeys().Names();
  YAML::Node group(YAML::NodeType::Map);  // The group's own keys, without sparsity_type.
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    if (name == "sparsity_type") {
      auto type = yaml_util::ReadEnum(kv.second, prefix + name, SparsityTypes().entries());
      if (!type.ok()) return type.status();
      if (*type != SparsityType::kUnstructured) {
        return Error(kv.second, prefix + name,
                     "value " + kv.second.Scalar() +
                         " cannot be combined with dynamic group keys (algorithm, sparsity, ...): dynamic "
                         "sparsity (§7) is UNSTRUCTURED");
      }
    } else if (std::find(group_keys.begin(), group_keys.end(), name) != group_keys.end()) {
      group[kv.first] = kv.second;
    } else if (IsSparsityKey(name) && IsSrigl(node)) {
      return Error(kv.first, prefix + name,
                   "does not apply to algorithm SRIGL: SRigL keeps a constant fan-in per output neuron (k "
                   "non-zeros anywhere in each row), not M-grouped N:M; drop " +
                       prefix + name);
    } else {
      return Error(kv.first, prefix + name,
                   "unknown key next to dynamic group keys; a group takes " +
                       absl::StrJoin(group_keys, ", ") + " (N:M keys go in a section without them)");
    }
  }
  absl::StatusOr<DynamicSparsityGroup> parsed = ReadGroupKeys(group, node, path);
  if (!parsed.ok()) return parsed.status();
  SparsityConfig config;
  config.sparsity_type = SparsityType::kUnstructured;
  config.dynamic.push_back(*std::move(parsed));
  return config;
}

}  // namespace nmsparse
