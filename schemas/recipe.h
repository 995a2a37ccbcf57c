// Named recipes (`sparsity.recipe: MDGF`): a shorthand for the sparsity keys that make each of the paper's
// recipes (docs/sweeps.md). The recipe is input only: it expands into the existing keys before anything is
// validated, stored or hashed, so `recipe: SRSTE` and `sparsity_type: SRSTE` are the same run. A key the file
// also gives explicitly must agree with the recipe; otherwise the error names both.
#ifndef NMSPARSE_SCHEMAS_RECIPE_H_
#define NMSPARSE_SCHEMAS_RECIPE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

inline constexpr char kRecipeKey[] = "recipe";

// One sparsity key a recipe sets: the value it writes, and every value that still is that recipe (MDGF is
// EXP or LINEAR decay).
struct RecipeKey {
  std::string key;
  std::vector<std::string> allowed;  // allowed[0] is written when the key is not given.
  // A default only: allowed[0] (YAML text, e.g. a flow list) is written when the key is not given, any
  // value given stands, and the key does not decide which recipe a section is (the authors' defaults of a
  // recipe that a user may tune, e.g. HU24's decay).
  bool default_only = false;
};

struct Recipe {
  std::string name;  // Upper case: DENSE, STE, SRSTE, MDGF, SDGF.
  std::string summary;
  std::vector<RecipeKey> keys;
};

// The table of recipes, in the order docs and errors list them.
const std::vector<Recipe>& Recipes();

struct SparsityConfig;

// The name of the recipe a parsed sparsity section is: the first of Recipes() whose keys all have one of
// their allowed values, else the section's sparsity_type (UNSTRUCTURED). What reports and nmctl validate
// call a run.
std::string RecipeOf(const SparsityConfig& sparsity);

// The recipe named `name` (any case), or nullptr.
const Recipe* FindRecipe(const std::string& name);

// `sparsity` (a map of sparsity keys; `path` is its key prefix, e.g. "sparsity.") with its `recipe` key
// replaced by the keys it implies. Returns the map unchanged without a recipe key. Errors name the recipe and
// the conflicting key with its line.
absl::StatusOr<YAML::Node> ExpandRecipe(const YAML::Node& sparsity, const std::string& path);

// For an override `sparsity.recipe: NAME` (sweep axes, --set): drops from `sparsity` the keys NAME sets that
// disagree with it (they come from the base, fully written out), then sets the recipe key. Keys that agree
// stay (`decay_type: LINEAR` under MDGF), so the order of an axis value's overrides does not matter; a key
// set after the recipe that disagrees with it is an error when the spec is parsed.
void OverrideRecipe(YAML::Node& sparsity, const YAML::Node& value);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_RECIPE_H_
