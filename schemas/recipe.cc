#include "schemas/recipe.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/sparsity_config.h"
#include "schemas/spec_keys.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

std::vector<std::string> RecipeNames() {
  std::vector<std::string> names;
  for (const Recipe& r : Recipes()) names.push_back(r.name);
  return names;
}

// The explicit value's text, normalised as the key's reader would compare it: booleans as TRUE/FALSE,
// everything else upper case.
std::string Normalised(const YAML::Node& value, const std::string& key) {
  if (key == "structure_decay_flag") {
    auto b = yaml_util::ReadBool(value, key);
    if (b.ok()) return *b ? "TRUE" : "FALSE";
  }
  return yaml_util::Upper(value.IsScalar() ? value.Scalar() : yaml_util::Describe(value));
}

std::string AllowedText(const RecipeKey& k) {
  return absl::StrJoin(k.allowed, " or ", [](std::string* out, const std::string& v) {
    absl::StrAppend(out, v == "TRUE" ? "true" : v == "FALSE" ? "false" : v);
  });
}

// Whether `value` of `key` is the key table's default (what a fully written-out section holds for a key
// nobody set), e.g. srste_lambda 2e-4 or phases [].
bool IsKeyDefault(const std::string& key, const YAML::Node& value) {
  if (!value || yaml_util::IsNullish(value)) return true;
  YAML::Node single(YAML::NodeType::Map);
  single[key] = value;
  const absl::StatusOr<SparsityConfig> parsed = ParseSparsityConfig(single, "");
  return parsed.ok() && *parsed == SparsityConfig();
}

// A recipe's default for `k` is written unless the section gives the key, or (for phases) the fractions
// that a phase list cannot be combined with.
bool WritesDefault(const RecipeKey& k, const YAML::Node& sparsity) {
  if (!IsKeyDefault(k.key, sparsity[k.key])) return false;
  if (k.key != "phases") return true;
  return IsKeyDefault("dense_steps", sparsity["dense_steps"]) &&
         IsKeyDefault("fine_tune_steps", sparsity["fine_tune_steps"]);
}

}  // namespace

const std::vector<Recipe>& Recipes() {
  static const auto* recipes = new std::vector<Recipe>{
      {"DENSE", "no sparsity", {{"sparsity_type", {"DENSE"}}}},
      {"STE",
       "N:M masks with the straight-through estimator, D(j) = 0",
       {{"sparsity_type", {"STRUCTURED_NM"}}, {"decay_type", {"STEP"}}, {"structure_decay_flag", {"FALSE"}}}},
      {"SRSTE",
       "sparse-refined STE (SR-STE): the dense gradient plus lambda * pruned weights",
       {{"sparsity_type", {"SRSTE"}}}},
      {"MDGF",
       "mask decay gradient flow: pruned weights get a gradient scaled by a decaying D(j), exponential "
       "(default) "
       "or linear",
       {{"sparsity_type", {"STRUCTURED_NM"}},
        {"decay_type", {"EXP", "LINEAR"}},
        {"structure_decay_flag", {"FALSE"}}}},
      {"SDGF",
       "structure decay gradient flow: the N:M itself decays in stages towards the target "
       "(structure_decay_type)",
       {{"sparsity_type", {"STRUCTURED_NM"}}, {"decay_type", {"STEP"}}, {"structure_decay_flag", {"TRUE"}}}},
      {"SSTE",
       "S-STE (Hu, Zhu, Chen, NeurIPS 2024): 2:4 soft threshold scaled by a factor frozen at initialisation, "
       "gradient straight through, weight gradient by MVUE 2:4; no decay, no fine-tune",
       {{"sparsity_type", {"SSTE"}}, {"n_sparsity", {"2"}}, {"m_sparsity", {"4"}}}},
      {"STEP",
       "STEP (Lu et al., ICML 2023): dense AdamW until the second moment settles, then hard 2:4 straight "
       "through with that moment frozen; needs optimizer.name adamw",
       {{"sparsity_type", {"STEP"}}, {"n_sparsity", {"2"}}, {"m_sparsity", {"4"}}}},
      {"HU24",
       "Hu et al. (ICML 2024): transposable 2:4 mask refreshed every mask_refresh_steps (first at step 10) "
       "and "
       "held, weight gradient by MVUE 2:4, masked decay 1e-3 after clipping, dense for the last sixth",
       {{"sparsity_type", {"HU24"}},
        {"n_sparsity", {"2"}},
        {"m_sparsity", {"4"}},
        {"srste_lambda", {"0.001"}, /*default_only=*/true},
        {"phases", {"[{sparse: 0.8333333333333334}, {dense: 0.16666666666666666}]"}, /*default_only=*/true}}},
      {"SRIGL",
       "SRigL (Lasby et al., ICLR 2024): RigL with a constant fan-in per output neuron and neuron ablation, "
       "not M-grouped N:M; a dynamic group (algorithm SRIGL) with the authors' ViT defaults, every 100 steps "
       "until 0.75 of the run; needs sparsity",
       {{"algorithm", {"SRIGL"}}}},
      {"BIMASK",
       "Bi-Mask (Zhang et al., ICML 2023): N:M forward mask of |W| at every forward, backward mask N:M "
       "along output rows under a permutation searched every permutation_refresh_forwards forward calls, "
       "SR-STE decay inside the backward (times the batch for [B, T, C] inputs); all four block linears",
       {{"sparsity_type", {"BIMASK"}}, {"sparsity_loc", {"[FF, Q, K, V, O]"}, /*default_only=*/true}}},
  };
  return *recipes;
}

std::string RecipeOf(const SparsityConfig& sparsity) {
  if (sparsity.IsDynamic()) {
    const bool srigl =
        std::all_of(sparsity.dynamic.begin(), sparsity.dynamic.end(),
                    [](const DynamicSparsityGroup& g) { return g.algorithm == DynamicAlgorithm::kSrigl; });
    return srigl ? "SRIGL" : ToString(sparsity.sparsity_type);
  }
  const YAML::Node keys = SparsityConfigToYaml(sparsity);
  for (const Recipe& r : Recipes()) {
    const bool is = std::all_of(r.keys.begin(), r.keys.end(), [&keys](const RecipeKey& k) {
      if (k.default_only) return true;
      const YAML::Node value = keys[k.key];
      return value &&
             std::find(k.allowed.begin(), k.allowed.end(), Normalised(value, k.key)) != k.allowed.end();
    });
    if (is) return r.name;
  }
  return ToString(sparsity.sparsity_type);
}

const Recipe* FindRecipe(const std::string& name) {
  const std::string upper = yaml_util::Upper(name);
  for (const Recipe& r : Recipes()) {
    if (r.name == upper) return &r;
  }
  return nullptr;
}

absl::StatusOr<YAML::Node> ExpandRecipe(const YAML::Node& sparsity, const std::string& path) {
  if (!sparsity.IsMap() || !sparsity[kRecipeKey]) return sparsity;
  const YAML::Node name_node = sparsity[kRecipeKey];
  const std::string key = path + kRecipeKey;
  if (yaml_util::IsNullish(name_node)) {
    YAML::Node out = YAML::Clone(sparsity);
    out.remove(kRecipeKey);
    return out;
  }
  auto name = yaml_util::ReadString(name_node, key);
  if (!name.ok()) return name.status();
  const Recipe* recipe = FindRecipe(*name);
  if (recipe == nullptr) {
    return yaml_util::Error(name_node, key,
                            "value '" + *name + "' is not one of " + absl::StrJoin(RecipeNames(), ", "));
  }
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : sparsity) {
    if (kv.first.as<std::string>() != kRecipeKey) out[kv.first] = kv.second;
  }
  for (const RecipeKey& k : recipe->keys) {
    const YAML::Node given = sparsity[k.key];
    if (k.default_only) {
      if (!given || yaml_util::IsNullish(given)) {
        if (WritesDefault(k, sparsity)) out[k.key] = YAML::Load(k.allowed[0]);
      }
      continue;
    }
    if (!given || yaml_util::IsNullish(given)) {
      out[k.key] = k.allowed[0] == "TRUE" ? "true" : k.allowed[0] == "FALSE" ? "false" : k.allowed[0];
      continue;
    }
    const std::string value = Normalised(given, k.key);
    if (std::find(k.allowed.begin(), k.allowed.end(), value) == k.allowed.end()) {
      const int line = yaml_util::Line(given);
      return yaml_util::Error(
          name_node, key,
          absl::StrCat("value ", recipe->name, " sets ", path, k.key, " to ", AllowedText(k), ", but ", path,
                       k.key, " is ", given.Scalar(), line > 0 ? absl::StrCat(" (line ", line, ")") : "",
                       ": drop one of the two"));
    }
  }
  return out;
}

void OverrideRecipe(YAML::Node& sparsity, const YAML::Node& value) {
  const Recipe* recipe = value.IsScalar() ? FindRecipe(value.Scalar()) : nullptr;
  if (recipe != nullptr && recipe->name == "SRIGL" && sparsity.IsMap()) {
    // A dynamic group: the base's N:M keys (written out) are not its to keep.
    const std::vector<std::string> group_keys = DynamicGroupKeys().Names();
    std::vector<std::string> drop;
    for (const auto& kv : sparsity) {
      const std::string name = kv.first.as<std::string>();
      if (std::find(group_keys.begin(), group_keys.end(), name) == group_keys.end()) drop.push_back(name);
    }
    for (const std::string& name : drop) sparsity.remove(name);
  }
  if (recipe != nullptr) {
    for (const RecipeKey& k : recipe->keys) {
      const YAML::Node current = sparsity[k.key];
      // A written-out base holds every key: one at the key table's default is the recipe's to set.
      if (k.default_only) {
        if (current && IsKeyDefault(k.key, current)) sparsity.remove(k.key);
        continue;
      }
      if (!current || yaml_util::IsNullish(current)) continue;
      const std::string text = Normalised(current, k.key);
      if (std::find(k.allowed.begin(), k.allowed.end(), text) == k.allowed.end()) sparsity.remove(k.key);
    }
  }
  sparsity[kRecipeKey] = value;
}

}  // namespace nmsparse
