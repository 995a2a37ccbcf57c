#include "worker/trainer/interop/model_export.h"

#include <torch/torch.h>

#include <fstream>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "contract/metric_names.h"
#include "contract/run_directory.h"
#include "nlohmann/json.hpp"
#include "schemas/data_pipeline.h"
#include "worker/sparsity/sparsity_engine.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/interop/safetensors.h"
#include "worker/trainer/interop/timm_config.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/run_parts.h"
#include "worker/trainer/scheduler/lr_scheduler.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {
namespace {

using nlohmann::json;

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw TrainerError(kExitTraining, "--export: cannot write " + path);
}

void LoadWeights(const ExportOptions& options, torch::nn::Module& model) {
  try {
    LoadModelFromCheckpoint(options.checkpoint, model);
    if (!options.ema) return;
    const NamedTensors ema = LoadModelEmaFromCheckpoint(options.checkpoint);
    if (ema.empty()) {
      throw TrainerError(kExitUsage, "--weights ema: " + options.checkpoint +
                                         " holds no model EMA (the run did not set model.ema)");
    }
    torch::NoGradGuard no_grad;
    auto params = model.named_parameters();
    for (const auto& [name, tensor] : ema) {
      if (torch::Tensor* p = params.find(name)) p->copy_(tensor);
    }
  } catch (const c10::Error& e) {
    throw TrainerError(kExitTraining, "--export: cannot read checkpoint " + options.checkpoint + ": " +
                                          e.what_without_backtrace());
  }
}

// The largest count of nonzeros in any 4 consecutive weights along in_features (the rows of a Linear's
// [out, in] weight); -1 when in_features is not a multiple of 4 or the weight is not 2-D.
int64_t MaxNonzerosPerFour(const torch::Tensor& block) {
  if (block.dim() != 2 || block.size(1) % 4 != 0) return -1;
  return block.ne(0).reshape({-1, 4}).sum(1).max().item<int64_t>();
}

std::string GroupedDimension(const SparsityConfig& config, const std::string& location) {
  if (location == "c") return "in_channels";
  return config.sparse_dim == SparseDim::kRow ? "in_features" : "out_features";
}

// One entry per sparse block of the masked model.
json SparsityJson(const ExperimentConfig& config, const SparsityEngine& engine, torch::nn::Module& model) {
  const auto params = model.named_parameters();
  json layers = json::array();
  std::map<std::string, int64_t> next_row;  // A fused qkv weight's blocks follow each other.
  for (const SparseLayerReport& r : engine.Report()) {
    const int64_t row = next_row[r.name];
    next_row[r.name] = row + r.shape[0];
    if (r.target == "dense") continue;
    const std::string parameter = r.name + ".weight";
    const torch::Tensor block = params[parameter].detach().narrow(0, row, r.shape[0]);
    json entry = {{"parameter", parameter},
                  {"rows", {row, row + r.shape[0]}},
                  {"shape", r.shape},
                  {"location", r.location},
                  {"recipe", ToString(config.sparsity.sparsity_type)},
                  {"density", 1.0 - r.zero_fraction}};
    if (config.sparsity.sparsity_type == SparsityType::kUnstructured) {
      entry["prune_rate"] = config.sparsity.prune_rate;
    } else {
      const NM nm = r.location == "q" || r.location == "k" || r.location == "v" ? config.sparsity.nm_qkv
                                                                                : config.sparsity.nm;
      entry["n"] = nm.n;
      entry["m"] = nm.m;
      entry["grouped"] = GroupedDimension(config.sparsity, r.location);
    }
    const int64_t per_four = r.location == "c" ? -1 : MaxNonzerosPerFour(block);
    entry["two_four_along_in_features"] = per_four >= 0 && per_four <= 2;
    layers.push_back(std::move(entry));
  }
  return {{"recipe", ToString(config.sparsity.sparsity_type)},
          {"sparsity_loc", SparsityLocationsToString(config.sparsity.locations)},
          {"layers", std::move(layers)}};
}

// "- top-1: D deployable (...), R raw (...)" from the run's final line beside the checkpoint (the EMA's with
// --weights ema), or why it is not known.
std::string Top1Text(const ExportOptions& options) {
  const std::string checkpoint_dir = options.checkpoint.substr(0, options.checkpoint.find_last_of('/') + 1);
  const std::string path = checkpoint_dir + contract::kFinalMetricsFile;
  std::ifstream in(path);
  const json final_line = in ? json::parse(in, nullptr, /*allow_exceptions=*/false) : json();
  const char* deploy = options.ema ? contract::kEmaDeployTop1 : contract::kDeployTop1;
  const char* raw = options.ema ? contract::kEmaTop1 : contract::kTop1;
  if (!final_line.is_object() || !final_line.contains(raw) || !final_line[raw].is_number()) {
    return absl::StrCat("- top-1: not known (no final metrics in ", path,
                        ": the run has not finished, or it was trained before nmtrain wrote them)\n");
  }
  std::string text = "- top-1: ";
  if (final_line.contains(deploy) && final_line[deploy].is_number()) {
    absl::StrAppend(&text, final_line[deploy].dump(), "% deployable (", deploy,
                    ": this model, every sparse layer hard-masked at its target N:M), ");
  }
  absl::StrAppend(&text, final_line[raw].dump(), "% raw (", raw,
                  ": the trained weights under the last step's rule), on the run's evaluation set\n");
  return text;
}

std::string ModelCard(const ExperimentConfig& config, const ModelArch& arch, const ExportOptions& options) {
  const bool dense = config.sparsity.sparsity_type == SparsityType::kDense;
  return absl::StrCat(
      "# ", config.name.empty() ? arch.name : config.name, "\n\n", "Exported by nmtrain (nmsparse ", kVersion,
      ") from `", options.checkpoint, "` (", options.ema ? "model EMA" : "final", " weights, ",
      options.bf16 ? "bf16" : "fp32", ").\n\n", "- architecture: ", TimmArchitecture(arch), " (nmsparse ",
      arch.name, "), ", arch.num_classes, " classes, input ", arch.in_chans, "x", arch.img_size, "x",
      arch.img_size, "\n", "- recipe: ", ToString(config.sparsity.sparsity_type),
      dense ? " (dense)"
            : absl::StrCat(" ", config.sparsity.nm.n, ":", config.sparsity.nm.m, " (QKV ",
                           config.sparsity.nm_qkv.n, ":", config.sparsity.nm_qkv.m, ") on ",
                           SparsityLocationsToString(config.sparsity.locations),
                           "; every sparse layer hard-masked at its target (sparsity.json)"),
      "\n", "- data: ", config.data.dataset, config.data.path.empty() ? "" : " at " + config.data.path, "\n",
      Top1Text(options), "\n", "Load it in timm: see docs/interop.md.\n\n## Spec\n\n```yaml\n",
      CanonicalYaml(config), "```\n");
}

}  // namespace

void ExportModel(const ExperimentConfig& config, const ExportOptions& options) {
  if (config.sparsity.IsDynamic()) {
    throw TrainerError(kExitUsage,
                       "--export: runs with dynamic sparsity (sparsity.dynamic) are not exported yet: "
                       "their masks are optimizer-side state (docs/interop.md)");
  }
  const ModelArch arch = ResolveArch(config);
  absl::StatusOr<DataPipeline> eval = ResolveDataPipeline(config);
  if (!eval.ok()) throw TrainerError(kExitUsage, std::string(eval.status().message()));
  std::shared_ptr<ClassifierImpl> model = CreateModel(arch);
  LoadWeights(options, *model);
  const int64_t epochs = MakeLrScheduler(config.schedule, config.optimizer.lr, 1)->TrainedEpochs();
  absl::StatusOr<std::unique_ptr<SparsityEngine>> engine =
      SparsityEngine::Create(config.sparsity, static_cast<int>(epochs), 1, *model);
  if (!engine.ok()) throw TrainerError(kExitUsage, std::string(engine.status().message()));
  (*engine)->MaskWeightsAtTarget();

  NamedTensors weights;
  for (const auto& item : model->named_parameters()) {
    weights.emplace_back(item.key(),
                         options.bf16 ? item.value().detach().to(torch::kBFloat16) : item.value().detach());
  }
  MakeDirs(options.out_dir);
  const std::string dir = options.out_dir + "/";
  if (absl::Status s = WriteSafetensors(dir + kExportWeightsFile, weights, {{"format", "pt"}}); !s.ok()) {
    throw TrainerError(kExitTraining, "--export: " + std::string(s.message()));
  }
  WriteText(dir + kExportConfigFile, TimmConfigJson(arch, *eval).dump(2) + "\n");
  WriteText(dir + kExportSparsityFile, SparsityJson(config, **engine, *model).dump(2) + "\n");
  WriteText(dir + kExportCardFile, ModelCard(config, arch, options));
}

}  // namespace nmsparse
