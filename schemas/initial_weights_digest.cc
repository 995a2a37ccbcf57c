#include "schemas/initial_weights_digest.h"

#include "absl/strings/str_cat.h"

namespace nmsparse {

absl::Status RequireInitialWeightsDigest(const ExperimentConfig& config) {
  const ModelConfig& model = config.model;
  if (model.initial_checkpoint.empty() || !model.initial_checkpoint_sha256.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "model.initial_checkpoint_sha256 is required with model.initial_checkpoint '", model.initial_checkpoint,
      "': the file's content is part of the run's identity, and the coordinator cannot read it. nmctl fills "
      "it in where it can read the file; else give the file's SHA-256 (sha256sum FILE on the worker; for a "
      "folder, its model.safetensors)"));
}

}  // namespace nmsparse
