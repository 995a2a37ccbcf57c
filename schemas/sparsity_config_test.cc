#include "schemas/sparsity_config.h"

#include "gtest/gtest.h"
#include "schemas/recipe.h"

namespace nmsparse {
namespace {

absl::StatusOr<SparsityConfig> Parse(const std::string& text) {
  return ParseSparsityConfig(YAML::Load(text), "sparsity.");
}

std::string ErrorOf(const std::string& text) {
  auto config = Parse(text);
  EXPECT_FALSE(config.ok()) << text;
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

TEST(SparsityConfigTest, DefaultsWhenEmpty) {
  auto config = ParseSparsityConfig(YAML::Node(), "sparsity.");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->sparsity_type, SparsityType::kDense);
  EXPECT_EQ(config->nm, (NM{2, 4}));
  EXPECT_EQ(config->locations, std::vector<SparsityLocation>{SparsityLocation::kFF});
}

TEST(SparsityConfigTest, ReferenceKeysCaseInsensitive) {
  auto config = Parse(R"(
sparsity_type: structured_nm
decay_type: Exp
decay_coef: 0.0001
dense_steps: 0
fine_tune_steps: 0
structure_decay_flag: False
structure_decay_type: fine
n_sparsity: 1
m_sparsity: 32
sparsity_loc: FF
n_sparsity_qkv: 1
m_sparsity_qkv: 8
sparse_dim: row
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sparsity_type, SparsityType::kStructuredNM);
  EXPECT_EQ(config->decay_type, DecayType::kExp);
  EXPECT_DOUBLE_EQ(config->decay_coef, 1e-4);
  EXPECT_FALSE(config->structure_decay_flag);
  EXPECT_EQ(config->structure_decay_type, StructureDecayType::kFine);
  EXPECT_EQ(config->nm, (NM{1, 32}));
  EXPECT_EQ(config->nm_qkv, (NM{1, 8}));
  EXPECT_EQ(config->sparse_dim, SparseDim::kRow);
  EXPECT_EQ(TargetFor(*config, SparsityLocation::kFF), (NM{1, 32}));
  EXPECT_EQ(TargetFor(*config, SparsityLocation::kK), (NM{1, 8}));
}

TEST(SparsityConfigTest, QkvDefaultsToMainRatio) {
  auto config = Parse("n_sparsity: 1\nm_sparsity: 8\nsparsity_loc: FFQKV\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->nm_qkv, (NM{1, 8}));
  auto partial = Parse("n_sparsity: 1\nm_sparsity: 8\nn_sparsity_qkv: 2\n");
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_EQ(partial->nm_qkv, (NM{2, 8}));
  auto null_qkv = Parse("n_sparsity: 1\nm_sparsity: 16\nn_sparsity_qkv: null\nm_sparsity_qkv: ~\n");
  ASSERT_TRUE(null_qkv.ok());
  EXPECT_EQ(null_qkv->nm_qkv, (NM{1, 16}));
}

TEST(SparsityConfigTest, LocationForms) {
  using L = SparsityLocation;
  const std::vector<L> ffqkv = {L::kFF, L::kQ, L::kK, L::kV};
  for (const char* text : {"sparsity_loc: FFQKV", "sparsity_loc: FF,Q,K,V", "sparsity_loc: [ff, q, k, v]",
                           "sparsity_loc: qkvff", "sparsity_loc: FF+QKV"}) {
    auto config = Parse(text);
    ASSERT_TRUE(config.ok()) << text << ": " << config.status();
    EXPECT_EQ(config->locations, ffqkv) << text;
  }
  auto all = Parse("sparsity_loc: COFFQ");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(SparsityLocationsToString(all->locations), "FF,Q,O,C");
  EXPECT_EQ(
      ErrorOf("sparsity_loc: FX"),
      "line 1: sparsity.sparsity_loc: value 'FX' is not a set of locations: must be letters/words over FF, "
      "Q, K, V, O, C (e.g. FF, FFQKV, FF,Q,K,V)");
  EXPECT_EQ(
      ErrorOf("sparsity_loc: ''"),
      "line 1: sparsity.sparsity_loc: value '' names no location: must name at least one of FF, Q, K, V, "
      "O, C");
}

TEST(SparsityConfigTest, RangeErrorsNameKeyValueRangeAndLine) {
  EXPECT_EQ(ErrorOf("n_sparsity: 1\nm_sparsity: 0\n"),
            "line 2: sparsity.m_sparsity: value 0 is out of range: must be >= 1");
  EXPECT_EQ(ErrorOf("n_sparsity: 5\nm_sparsity: 4\n"),
            "line 1: sparsity.n_sparsity: value 5 is out of range: must be <= m_sparsity (4)");
  EXPECT_EQ(ErrorOf("n_sparsity_qkv: 9\nm_sparsity_qkv: 8\n"),
            "line 1: sparsity.n_sparsity_qkv: value 9 is out of range: must be <= m_sparsity_qkv (8)");
  EXPECT_EQ(ErrorOf("dense_steps: 1.0\n"),
            "line 1: sparsity.dense_steps: value 1.0 is out of range: must be in [0, 1)");
  EXPECT_EQ(
      ErrorOf("dense_steps: 0.6\nfine_tune_steps: 0.4\n"),
      "line 2: sparsity.fine_tune_steps: value 0.4 is out of range: dense_steps + fine_tune_steps must be "
      "< 1 (got 1)");
  EXPECT_EQ(ErrorOf("decay_coef: -1\n"),
            "line 1: sparsity.decay_coef: value -1 is out of range: must be >= 0");
  EXPECT_EQ(
      ErrorOf("structure_decay_start_multiple: 6\n"),
      "line 1: sparsity.structure_decay_start_multiple: value 6 is out of range: must be a power of two "
      "(1, 2, 4, 8, ...)");
}

TEST(SparsityConfigTest, TypeAndKeyErrors) {
  EXPECT_EQ(ErrorOf("sparsity_type: SPARSE\n"),
            "line 1: sparsity.sparsity_type: value 'SPARSE' is not one of DENSE, STRUCTURED_NM, SRSTE, "
            "UNSTRUCTURED, SSTE, STEP, HU24, BIMASK");
  EXPECT_EQ(ErrorOf("\nn_sparsity: two\n"), "line 2: sparsity.n_sparsity: value 'two' is not an integer");
  EXPECT_EQ(ErrorOf("n_sparsity: 1.5\n"), "line 1: sparsity.n_sparsity: value '1.5' is not an integer");
  EXPECT_EQ(ErrorOf("decay_coef: [1]\n"), "line 1: sparsity.decay_coef: value [1] is not a number");
  EXPECT_EQ(ErrorOf("structure_decay_flag: maybe\n"),
            "line 1: sparsity.structure_decay_flag: value 'maybe' is not a boolean: must be true or false");
  EXPECT_EQ(
      ErrorOf("sparsity_type: DENSE\nm_sparsty: 4\n"),
      "line 2: sparsity.m_sparsty: unknown key (did you mean 'm_sparsity'?); known keys: recipe, "
      "sparsity_type, n_sparsity, m_sparsity, "
      "n_sparsity_qkv, m_sparsity_qkv, decay_type, decay_coef, structure_decay_flag, structure_decay_type, "
      "structure_decay_start_multiple, dense_steps, fine_tune_steps, sparsity_loc, sparse_dim, prune_rate, "
      "srste_lambda, srste_decay_under_loss_scale, step_switch_min, step_switch_max, step_z_option, "
      "mask_refresh_steps, permutation_refresh_forwards, phases, dynamic");
  EXPECT_EQ(
      ErrorOf("algorithm: rigl\n"),
      "line 1: sparsity.sparsity: missing: a dynamic sparsity group needs its sparsity (a number in [0, "
      "1] or a schedule)");
  EXPECT_EQ(ErrorOf("[1, 2]"),
            "line 1: sparsity[0]: value 1 is not a dynamic sparsity group: expected {algorithm: ..., "
            "sparsity: ..., ...}");
  EXPECT_EQ(ErrorOf("7"), "line 1: sparsity: value 7 is not a map of sparsity keys");
  EXPECT_TRUE(IsSparsityKey("m_sparsity"));
  EXPECT_TRUE(IsSparsityKey("algorithm"));
  EXPECT_FALSE(IsSparsityKey("lr"));
}

// The section reads on its key table like every other: a key given twice is refused (it used to take the
// last value), and dynamic groups need no sparsity_type beside them (UNSTRUCTURED is implied).
TEST(SparsityConfigTest, DuplicateKeysAndImpliedUnstructured) {
  EXPECT_EQ(ErrorOf("m_sparsity: 4\nm_sparsity: 8\n"), "line 2: sparsity.m_sparsity: duplicate key");
  auto dynamic = Parse("dynamic: [{algorithm: rigl, sparsity: 0.9}]\n");
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  EXPECT_EQ(dynamic->sparsity_type, SparsityType::kUnstructured);
  EXPECT_EQ(
      ErrorOf("sparsity_type: SRSTE\ndynamic: [{algorithm: rigl, sparsity: 0.9}]\n"),
      "line 1: sparsity.sparsity_type: value SRSTE cannot be combined with dynamic groups: dynamic sparsity "
      "(§7) is UNSTRUCTURED");
}

TEST(SparsityConfigTest, DynamicInlineGroup) {
  auto config = Parse(R"(
algorithm: rigl
sparsity: 0.9
drop_fraction: {type: cosine, start_value: 0.3, end_value: 0, end_step: 1000}
init_method: topk
update: {freq: 50, start: 10, stop: 900}
param_filter: "blocks.*.mlp.*"
balance_out_groups: 4
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sparsity_type, SparsityType::kUnstructured);
  ASSERT_EQ(config->dynamic.size(), 1u);
  const DynamicSparsityGroup& g = config->dynamic[0];
  EXPECT_EQ(g.algorithm, DynamicAlgorithm::kRigl);
  EXPECT_EQ(g.sparsity, StepSchedule::Constant(0.9));
  EXPECT_EQ(g.drop_fraction.type, StepSchedule::Type::kCosine);
  EXPECT_EQ(g.init_method, InitMethod::kTopk);
  EXPECT_EQ(g.update, (UpdateSchedule{50, 10, 900}));
  EXPECT_EQ(g.param_filter, std::vector<std::string>{"blocks.*.mlp.*"});
  EXPECT_EQ(g.balance_out_groups, 4);
  EXPECT_EQ(g.balance_in_groups, 0);
}

TEST(SparsityConfigTest, DynamicDefaults) {
  auto config = Parse("sparsity: 0.5\n");
  ASSERT_TRUE(config.ok()) << config.status();
  const DynamicSparsityGroup& g = config->dynamic.at(0);
  EXPECT_EQ(g.algorithm, DynamicAlgorithm::kStatic);
  EXPECT_EQ(g.drop_fraction, StepSchedule::Constant(0.3));
  EXPECT_EQ(g.init_method, InitMethod::kRandom);
  EXPECT_EQ(g.update, (UpdateSchedule{100, 0, 0}));
  EXPECT_TRUE(g.param_filter.empty());
}

TEST(SparsityConfigTest, DynamicListOfGroupsAndCanonicalForm) {
  auto config = Parse(R"(
- {param_filter: "blocks.*.mlp.*", algorithm: rigl, sparsity: 0.9}
- {param_filter: ["blocks.*.attn.qkv.weight", "head.weight"], algorithm: GMP,
   sparsity: {type: power, start_value: 0, end_value: 0.8, end_step: 100}, update: {freq: 10}}
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sparsity_type, SparsityType::kUnstructured);
  ASSERT_EQ(config->dynamic.size(), 2u);
  EXPECT_EQ(config->dynamic[1].algorithm, DynamicAlgorithm::kGmp);
  EXPECT_EQ(config->dynamic[1].param_filter.size(), 2u);
  EXPECT_EQ(config->dynamic[1].update.freq, 10);
  // Canonical: the full section with sparsity_type UNSTRUCTURED and `dynamic`, parsing back equal.
  YAML::Emitter out;
  out << SparsityConfigToYaml(*config);
  const std::string canonical = out.c_str();
  EXPECT_NE(canonical.find("sparsity_type: UNSTRUCTURED"), std::string::npos) << canonical;
  EXPECT_NE(canonical.find("algorithm: RIGL"), std::string::npos) << canonical;
  EXPECT_NE(canonical.find("param_filter: [blocks.*.mlp.*]"), std::string::npos) << canonical;
  auto back = Parse(canonical);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << canonical;
  EXPECT_TRUE(*back == *config);
  // A dense config writes an empty list.
  YAML::Emitter dense;
  dense << SparsityConfigToYaml(SparsityConfig());
  EXPECT_NE(std::string(dense.c_str()).find("dynamic: []"), std::string::npos);
}

TEST(SparsityConfigTest, DynamicErrorsNameKeyValueRangeAndLine) {
  EXPECT_EQ(ErrorOf("algorithm: rigl\nsparsity: 0.9\nn_sparsity: 2\n"),
            "line 3: sparsity.n_sparsity: unknown key next to dynamic group keys; a group takes algorithm, "
            "sparsity, drop_fraction, init_method, update, param_filter, balance_out_groups, "
            "balance_in_groups, t_end, grad_accumulation_n, dynamic_ablation, "
            "min_salient_weights_per_neuron, no_ablation_filter (N:M keys go in a section without them)");
  EXPECT_EQ(ErrorOf("sparsity_type: SRSTE\nsparsity: 0.9\n"),
            "line 1: sparsity.sparsity_type: value SRSTE cannot be combined with dynamic group keys "
            "(algorithm, sparsity, ...): dynamic sparsity (§7) is UNSTRUCTURED");
  EXPECT_EQ(ErrorOf("sparsity_type: STRUCTURED_NM\ndynamic: [{sparsity: 0.5}]\n"),
            "line 1: sparsity.sparsity_type: value STRUCTURED_NM cannot be combined with dynamic groups: "
            "dynamic sparsity (§7) is UNSTRUCTURED");
  EXPECT_EQ(ErrorOf("algorithm: magic\nsparsity: 0.5\n"),
            "line 1: sparsity.algorithm: value 'magic' is not one of STATIC, GMP, SET, RIGL, SRIGL");
  EXPECT_EQ(ErrorOf("sparsity: 0.5\nupdate: {freq: 0}\n"),
            "line 2: sparsity.update.freq: value 0 is out of range: must be >= 1");
  EXPECT_EQ(ErrorOf("sparsity: 0.5\nupdate: {start: 10, stop: 5}\n"),
            "line 2: sparsity.update.stop: value 5 is out of range: must be > start (10) or 0 (never stops)");
  EXPECT_EQ(ErrorOf("sparsity: 1.2\n"),
            "line 1: sparsity.sparsity: value 1.2 is out of range: must be in [0, 1]");
  EXPECT_EQ(ErrorOf("- {sparsity: 0.5, param_filter: ['']}\n"),
            "line 1: sparsity[0].param_filter[0]: value '' is empty: must be a glob such as blocks.*.mlp.*");
  EXPECT_EQ(ErrorOf("- {sparsity: 0.5, balance_in_groups: -1}\n"),
            "line 1: sparsity[0].balance_in_groups: value -1 is out of range: must be in [0, 1048576]");
  EXPECT_EQ(ErrorOf("dynamic: [{sparsity: 0.5, init: topk}]\n"),
            "line 1: sparsity.dynamic[0].init: unknown key; known keys: algorithm, sparsity, drop_fraction, "
            "init_method, update, param_filter, balance_out_groups, balance_in_groups, t_end, "
            "grad_accumulation_n, dynamic_ablation, min_salient_weights_per_neuron, no_ablation_filter");
}

TEST(SparsityConfigTest, UpdateSteps) {
  const UpdateSchedule u{10, 5, 40};
  EXPECT_FALSE(u.IsUpdateStep(5));  // Masks are created at start; the first change is a freq later.
  EXPECT_FALSE(u.IsUpdateStep(10));
  EXPECT_TRUE(u.IsUpdateStep(15));
  EXPECT_TRUE(u.IsUpdateStep(35));
  EXPECT_FALSE(u.IsUpdateStep(45));
  EXPECT_TRUE((UpdateSchedule{10, 0, 0}).IsUpdateStep(1000000));
}

TEST(SparsityConfigTest, BoolSpellings) {
  for (const char* t : {"true", "True", "TRUE", "yes", "on"}) {
    auto c = Parse(std::string("structure_decay_flag: ") + t);
    ASSERT_TRUE(c.ok()) << t;
    EXPECT_TRUE(c->structure_decay_flag) << t;
  }
  auto off = Parse("structure_decay_flag: Off");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->structure_decay_flag);
}

TEST(SparsityConfigTest, PhasesBothForms) {
  auto shorthand = Parse("sparsity_type: SRSTE\nphases: [{sparse: 0.8}, {dense: 0.2}]\n");
  ASSERT_TRUE(shorthand.ok()) << shorthand.status();
  ASSERT_EQ(shorthand->phases.size(), 2u);
  EXPECT_EQ(shorthand->phases[0].kind, PhaseKind::kSparse);
  EXPECT_DOUBLE_EQ(shorthand->phases[0].fraction, 0.8);
  EXPECT_EQ(shorthand->phases[1].kind, PhaseKind::kDense);
  auto canonical =
      Parse("phases:\n  - {kind: SPARSE, fraction: 0.7}\n  - {kind: fine_tune, fraction: 0.3}\n");
  ASSERT_TRUE(canonical.ok()) << canonical.status();
  EXPECT_EQ(canonical->phases[1].kind, PhaseKind::kFineTune);

  EXPECT_EQ(ErrorOf("phases: [{sparse: 0.8}, {dense: 0.1}]\n"),
            "line 1: sparsity.phases: phase fractions sum to 0.9: must sum to 1");
  EXPECT_EQ(ErrorOf("phases:\n  - {sparse: 0.5}\n  - {warm: 0.5}\n"),
            "line 3: sparsity.phases[1]: value 'warm' is not one of DENSE, SPARSE, FINE_TUNE");
  EXPECT_EQ(ErrorOf("phases:\n  - {sparse: 1.5}\n"),
            "line 2: sparsity.phases[0].sparse: value 1.5 is out of range: must be in [0, 1]");
  EXPECT_EQ(
      ErrorOf("dense_steps: 0.1\nphases: [{sparse: 1}]\n"),
      "line 2: sparsity.phases: cannot be combined with dense_steps / fine_tune_steps: give the dense and "
      "fine-tune parts as phases");
}

TEST(SparsityConfigTest, CanonicalYamlRoundTrips) {
  auto config = Parse(R"(
sparsity_type: srste
n_sparsity: 1
m_sparsity: 8
n_sparsity_qkv: 2
m_sparsity_qkv: 4
decay_coef: 0.0003
srste_lambda: 0.1
sparsity_loc: qkv ff
phases: [{sparse: 0.8}, {dense: 0.2}]
)");
  ASSERT_TRUE(config.ok()) << config.status();
  YAML::Emitter out;
  out << SparsityConfigToYaml(*config);
  auto again = ParseSparsityConfig(YAML::Load(out.c_str()), "sparsity.");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << out.c_str();
  YAML::Emitter out2;
  out2 << SparsityConfigToYaml(*again);
  EXPECT_EQ(std::string(out.c_str()), std::string(out2.c_str()));
  EXPECT_EQ(again->nm_qkv, (NM{2, 4}));
  EXPECT_EQ(again->phases.size(), 2u);
  EXPECT_NE(std::string(out.c_str()).find("sparsity_type: SRSTE\n"), std::string::npos);
  EXPECT_NE(std::string(out.c_str()).find("sparsity_loc: FF,Q,K,V\n"), std::string::npos);
}

// issue 14: named recipes expand to the existing keys; an explicit key that disagrees names both.
TEST(SparsityConfigTest, RecipesExpandToTheExistingKeys) {
  auto mdgf = Parse("recipe: MDGF\nn_sparsity: 1\nm_sparsity: 8\n");
  ASSERT_TRUE(mdgf.ok()) << mdgf.status();
  EXPECT_EQ(mdgf->sparsity_type, SparsityType::kStructuredNM);
  EXPECT_EQ(mdgf->decay_type, DecayType::kExp);
  EXPECT_FALSE(mdgf->structure_decay_flag);
  auto linear = Parse("recipe: mdgf\ndecay_type: linear\n");
  ASSERT_TRUE(linear.ok()) << linear.status();
  EXPECT_EQ(linear->decay_type, DecayType::kLinear);
  auto sdgf = Parse("recipe: SDGF\nstructure_decay_type: fine\n");
  ASSERT_TRUE(sdgf.ok()) << sdgf.status();
  EXPECT_TRUE(sdgf->structure_decay_flag);
  EXPECT_EQ(sdgf->decay_type, DecayType::kStep);
  EXPECT_EQ(sdgf->structure_decay_type, StructureDecayType::kFine);
  // The same run as the explicit keys.
  EXPECT_EQ(*Parse("recipe: SRSTE\n"), *Parse("sparsity_type: SRSTE\n"));
  EXPECT_EQ(*Parse("recipe: STE\n"), *Parse("sparsity_type: STRUCTURED_NM\ndecay_type: STEP\n"));
  EXPECT_EQ(Parse("recipe: DENSE\n")->sparsity_type, SparsityType::kDense);

  EXPECT_EQ(ErrorOf("recipe: MDGF\ndecay_type: STEP\n"),
            "line 1: sparsity.recipe: value MDGF sets sparsity.decay_type to EXP or LINEAR, but "
            "sparsity.decay_type is STEP (line 2): drop one of the two");
  EXPECT_EQ(ErrorOf("sparsity_type: SRSTE\nrecipe: SDGF\n"),
            "line 2: sparsity.recipe: value SDGF sets sparsity.sparsity_type to STRUCTURED_NM, but "
            "sparsity.sparsity_type is SRSTE (line 1): drop one of the two");
  EXPECT_EQ(
      ErrorOf("recipe: MDFG\n"),
      "line 1: sparsity.recipe: value 'MDFG' is not one of DENSE, STE, SRSTE, MDGF, SDGF, SSTE, STEP, HU24, "
      "SRIGL, BIMASK");
}

// HU24 (docs/sparsity-method.md §12.3): the recipe fixes the type and 2:4 and writes the authors' defaults
// (decay 1e-3, dense for the last sixth: their switch at epoch 250 of 300), which a given key replaces.
TEST(SparsityConfigTest, Hu24RecipeWritesTheAuthorsDefaults) {
  auto hu24 = Parse("recipe: HU24\n");
  ASSERT_TRUE(hu24.ok()) << hu24.status();
  EXPECT_EQ(hu24->sparsity_type, SparsityType::kHu24);
  EXPECT_EQ(hu24->nm, (NM{2, 4}));
  EXPECT_DOUBLE_EQ(hu24->srste_lambda, 1e-3);
  EXPECT_EQ(hu24->mask_refresh_steps, 10);
  ASSERT_EQ(hu24->phases.size(), 2u);
  EXPECT_EQ(hu24->phases[0].kind, PhaseKind::kSparse);
  EXPECT_EQ(hu24->phases[1].kind, PhaseKind::kDense);
  EXPECT_DOUBLE_EQ(hu24->phases[1].fraction * 300, 50.0);
  EXPECT_EQ(RecipeOf(*hu24), "HU24");

  auto tuned = Parse("recipe: HU24\nsrste_lambda: 6e-5\nmask_refresh_steps: 40\nphases: [{sparse: 1}]\n");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_DOUBLE_EQ(tuned->srste_lambda, 6e-5);
  EXPECT_EQ(tuned->mask_refresh_steps, 40);
  EXPECT_EQ(tuned->phases.size(), 1u);
  EXPECT_EQ(RecipeOf(*tuned), "HU24");
  // The fine-tune fractions replace the phase list rather than clash with it.
  auto fractions = Parse("recipe: HU24\nfine_tune_steps: 0.1\n");
  ASSERT_TRUE(fractions.ok()) << fractions.status();
  EXPECT_TRUE(fractions->phases.empty());
  // The canonical form parses back to the same run, and the refresh period is written only when not 10.
  YAML::Emitter out;
  out << SparsityConfigToYaml(*tuned);
  EXPECT_NE(std::string(out.c_str()).find("mask_refresh_steps: 40"), std::string::npos) << out.c_str();
  EXPECT_EQ(*ParseSparsityConfig(YAML::Load(out.c_str()), "sparsity."), *tuned);
  YAML::Emitter plain;
  plain << SparsityConfigToYaml(*hu24);
  EXPECT_EQ(std::string(plain.c_str()).find("mask_refresh_steps"), std::string::npos) << plain.c_str();

  EXPECT_EQ(ErrorOf("recipe: HU24\nn_sparsity: 1\n"),
            "line 1: sparsity.recipe: value HU24 sets sparsity.n_sparsity to 2, but sparsity.n_sparsity is 1 "
            "(line 2): drop one of the two");
  EXPECT_EQ(ErrorOf("recipe: STE\nmask_refresh_steps: 20\n"),
            "line 2: sparsity.mask_refresh_steps: is a key of sparsity_type HU24 only, not STRUCTURED_NM");
  EXPECT_EQ(ErrorOf("sparsity_type: HU24\nmask_refresh_steps: 0\n"),
            "line 2: sparsity.mask_refresh_steps: value 0 is out of range: must be in [1, 1000000]");
}

// A sweep axis `sparsity.recipe: HU24` over a written-out base: the keys the base holds at their defaults
// (srste_lambda 2e-4, phases []) give way to the recipe's, as if the base had not set them.
TEST(SparsityConfigTest, Hu24OverAWrittenOutBaseGetsItsDefaults) {
  YAML::Node base = SparsityConfigToYaml(*Parse("sparsity_loc: FF\n"));
  OverrideRecipe(base, YAML::Node("HU24"));
  auto hu24 = ParseSparsityConfig(base, "sparsity.");
  ASSERT_TRUE(hu24.ok()) << hu24.status();
  EXPECT_EQ(*hu24, *Parse("recipe: HU24\n"));
  YAML::Node tuned = SparsityConfigToYaml(*Parse("srste_lambda: 6e-5\n"));
  OverrideRecipe(tuned, YAML::Node("HU24"));
  EXPECT_DOUBLE_EQ(ParseSparsityConfig(tuned, "sparsity.")->srste_lambda, 6e-5);
}

// SRIGL (docs/sparsity-method.md §7.1): a dynamic group with the authors' ViT defaults, omitted from the
// canonical form while at them; N:M keys beside it are refused naming the key and why; SRIGL-only keys are
// refused with other algorithms; as an axis value over a written-out N:M base it drops the base's N:M keys.
TEST(SparsityConfigTest, SriglRecipeIsAConstantFanInGroup) {
  auto srigl = Parse("recipe: SRIGL\nsparsity: 0.9\n");
  ASSERT_TRUE(srigl.ok()) << srigl.status();
  ASSERT_EQ(srigl->dynamic.size(), 1u);
  const DynamicSparsityGroup& g = srigl->dynamic[0];
  EXPECT_EQ(g.algorithm, DynamicAlgorithm::kSrigl);
  EXPECT_EQ(g.update.freq, 100);
  EXPECT_DOUBLE_EQ(g.t_end, 0.75);
  EXPECT_EQ(g.grad_accumulation_n, 8);
  EXPECT_TRUE(g.dynamic_ablation);
  EXPECT_DOUBLE_EQ(g.min_salient_weights_per_neuron, 0.95);
  EXPECT_EQ(g.no_ablation_filter, std::vector<std::string>{"head.*"});
  EXPECT_EQ(ScheduleValue(g.drop_fraction, 0), 0.3);
  EXPECT_EQ(RecipeOf(*srigl), "SRIGL");
  YAML::Emitter out;
  out << SparsityConfigToYaml(*srigl);
  EXPECT_EQ(std::string(out.c_str()).find("t_end"), std::string::npos) << out.c_str();
  EXPECT_EQ(*ParseSparsityConfig(YAML::Load(out.c_str()), "sparsity."), *srigl);
  auto tuned = Parse("algorithm: srigl\nsparsity: 0.8\nt_end: 0.5\ndynamic_ablation: false\n");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  YAML::Emitter tuned_out;
  tuned_out << SparsityConfigToYaml(*tuned);
  EXPECT_EQ(*ParseSparsityConfig(YAML::Load(tuned_out.c_str()), "sparsity."), *tuned);

  EXPECT_EQ(
      ErrorOf("recipe: SRIGL\nsparsity: 0.9\nn_sparsity: 2\n"),
      "line 3: sparsity.n_sparsity: does not apply to algorithm SRIGL: SRigL keeps a constant fan-in per "
      "output neuron (k non-zeros anywhere in each row), not M-grouped N:M; drop sparsity.n_sparsity");
  EXPECT_EQ(ErrorOf("algorithm: RIGL\nsparsity: 0.9\nt_end: 0.5\n"),
            "line 3: sparsity.t_end: is a key of algorithm SRIGL only, not RIGL");

  YAML::Node base = SparsityConfigToYaml(*Parse("sparsity_loc: FF\nn_sparsity: 1\nm_sparsity: 8\n"));
  OverrideRecipe(base, YAML::Node("SRIGL"));
  base["sparsity"] = 0.9;
  auto swept = ParseSparsityConfig(base, "sparsity.");
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(*swept, *srigl);
}

// BIMASK (docs/sparsity-method.md §14): the recipe fixes the type and writes the authors' locations (all
// four block linears) unless given; its N:M, decay and search period are the keys' (2:4, 2e-4, 100
// forwards).
TEST(SparsityConfigTest, BimaskRecipeWritesTheAuthorsLocations) {
  auto bimask = Parse("recipe: BIMASK\n");
  ASSERT_TRUE(bimask.ok()) << bimask.status();
  EXPECT_EQ(bimask->sparsity_type, SparsityType::kBimask);
  EXPECT_EQ(bimask->nm, (NM{2, 4}));
  EXPECT_DOUBLE_EQ(bimask->srste_lambda, 2e-4);
  EXPECT_EQ(bimask->permutation_refresh_forwards, 100);
  EXPECT_EQ(bimask->locations,
            (std::vector<SparsityLocation>{SparsityLocation::kFF, SparsityLocation::kQ, SparsityLocation::kK,
                                           SparsityLocation::kV, SparsityLocation::kO}));
  EXPECT_EQ(RecipeOf(*bimask), "BIMASK");

  auto tuned = Parse("recipe: BIMASK\nsparsity_loc: FF\nn_sparsity: 1\npermutation_refresh_forwards: 7\n");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ(tuned->locations, std::vector<SparsityLocation>{SparsityLocation::kFF});
  EXPECT_EQ(tuned->nm, (NM{1, 4}));
  EXPECT_EQ(tuned->permutation_refresh_forwards, 7);
  EXPECT_EQ(RecipeOf(*tuned), "BIMASK");
  // Written only when not 100; the canonical form parses back to the same run.
  YAML::Emitter out;
  out << SparsityConfigToYaml(*tuned);
  EXPECT_NE(std::string(out.c_str()).find("permutation_refresh_forwards: 7"), std::string::npos)
      << out.c_str();
  EXPECT_EQ(*ParseSparsityConfig(YAML::Load(out.c_str()), "sparsity."), *tuned);
  YAML::Emitter plain;
  plain << SparsityConfigToYaml(*bimask);
  EXPECT_EQ(std::string(plain.c_str()).find("permutation_refresh_forwards"), std::string::npos)
      << plain.c_str();
  // As a sweep axis over a written-out base, a base at the default location (FF) gets the authors' four.
  YAML::Node base = SparsityConfigToYaml(*Parse("sparsity_loc: FF\n"));
  OverrideRecipe(base, YAML::Node("BIMASK"));
  EXPECT_EQ(*ParseSparsityConfig(base, "sparsity."), *bimask);

  EXPECT_EQ(ErrorOf("recipe: HU24\npermutation_refresh_forwards: 20\n"),
            "line 2: sparsity.permutation_refresh_forwards: is a key of sparsity_type BIMASK only, not HU24");
  EXPECT_EQ(
      ErrorOf("sparsity_type: BIMASK\npermutation_refresh_forwards: 0\n"),
      "line 2: sparsity.permutation_refresh_forwards: value 0 is out of range: must be in [1, 1000000]");
}

}  // namespace
}  // namespace nmsparse
