#include "schemas/semi_structured_layers.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace nmsparse {
namespace {

constexpr char kWeightSuffix[] = ".weight";

absl::Status CheckPhaseIndex(const SemiStructuredConfig& config, const SparsityConfig& sparsity) {
  if (config.dense_after_phase < 0) return absl::OkStatus();
  if (config.dense_after_phase >= static_cast<int>(sparsity.phases.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("semi_structured.dense_after.phase: value ", config.dense_after_phase,
                     " is out of range: sparsity.phases has ", sparsity.phases.size(), " phases"));
  }
  return absl::OkStatus();
}

// Rows of `layer` the engine sparsifies with 2:4 (blocks of a fused qkv count separately).
int64_t RowsAt24(const std::vector<LayerShape>& sparsified, const SparsityConfig& sparsity,
                 const std::string& layer) {
  int64_t rows = 0;
  for (const LayerShape& s : sparsified) {
    if (s.name == layer + kWeightSuffix && TargetFor(sparsity, s.location) == NM{2, 4}) rows += s.shape[0];
  }
  return rows;
}

absl::Status CheckEngineIs24(const SemiStructuredChoice& choice, const std::vector<LayerShape>& sparsified,
                             const SparsityConfig& sparsity) {
  const LinearShape& l = choice.layer;
  const bool nm_recipe =
      sparsity.sparsity_type == SparsityType::kStructuredNM || sparsity.sparsity_type == SparsityType::kSrste;
  if (!nm_recipe || sparsity.sparse_dim != SparseDim::kRow ||
      RowsAt24(sparsified, sparsity, l.name) != l.out_features) {
    return absl::InvalidArgumentError(absl::StrCat(
        "semi_structured.layers: layer ", l.name,
        " is not sparsified 2:4 along in_features by the sparsity section (sparsity_type STRUCTURED_NM or "
        "SRSTE, n_sparsity:m_sparsity 2:4 at its location in sparsity_loc, sparse_dim ROW): the 2:4 kernel "
        "runs the engine's own mask"));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<LinearShape> ModelLinears(const ModelArch& arch) {
  std::vector<LinearShape> linears;
  for (const ParameterShape& p : ModelParameters(arch)) {
    if (p.shape.size() != 2 || !absl::EndsWith(p.name, kWeightSuffix)) continue;
    const std::string module = p.name.substr(0, p.name.size() - (sizeof(kWeightSuffix) - 1));
    linears.push_back({module, p.shape[0], p.shape[1]});
  }
  return linears;
}

absl::StatusOr<std::vector<SemiStructuredChoice>> ChooseSemiStructuredLayers(
    const SemiStructuredConfig& config, const SparsityConfig& sparsity, const ModelArch& arch) {
  if (!config.Enabled()) return std::vector<SemiStructuredChoice>{};
  if (auto st = CheckPhaseIndex(config, sparsity); !st.ok()) return st;
  auto chosen = SelectSemiStructuredLayers(config, ModelLinears(arch));
  if (!chosen.ok()) return chosen.status();
  const std::vector<LayerShape> sparsified = SparsifiableLayers(arch, sparsity.locations);
  for (const SemiStructuredChoice& choice : *chosen) {
    if (choice.kind != SemiStructuredKind::kWeight) continue;
    if (auto st = CheckEngineIs24(choice, sparsified, sparsity); !st.ok()) return st;
  }
  return chosen;
}

std::string FormatSemiStructuredChoices(const SemiStructuredConfig& config,
                                        const std::vector<SemiStructuredChoice>& chosen) {
  if (chosen.empty()) return "";
  std::string dense_after = "never";
  if (config.dense_after_phase >= 0) {
    dense_after = absl::StrCat("from phase ", config.dense_after_phase);
  } else if (config.dense_after_fraction < 1.0) {
    dense_after = absl::StrCat("after ", config.dense_after_fraction * 100, "% of steps");
  }
  std::string out = absl::StrCat("semi-structured 2:4 layers: ", chosen.size(), " (accelerate ",
                                 ToString(config.accelerate), ", mask ", ToString(config.mask), ", margin ",
                                 config.margin, ", dense ", dense_after, ")\n");
  for (const SemiStructuredChoice& c : chosen) {
    absl::StrAppend(&out, "  ", c.layer.name, " ", ToString(c.kind), " [", c.layer.out_features, ", ",
                    c.layer.in_features, "]\n");
  }
  return out;
}

}  // namespace nmsparse
