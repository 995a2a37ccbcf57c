// The rule that puts a run's initial weights in its identity (issue 39, docs/interop.md): a spec naming
// model.initial_checkpoint carries the file's SHA-256 in model.initial_checkpoint_sha256, so the content
// hash covers the file's content, not only its path. The coordinator cannot read a worker's file: nmctl fills
// the digest in where it can read the file, nmserver refuses a run without it, nmtrain checks it at start.
#ifndef NMSPARSE_SCHEMAS_INITIAL_WEIGHTS_DIGEST_H_
#define NMSPARSE_SCHEMAS_INITIAL_WEIGHTS_DIGEST_H_

#include "absl/status/status.h"
#include "schemas/experiment_config.h"

namespace nmsparse {

// INVALID_ARGUMENT naming both keys and the path when `config` has an initial checkpoint but no digest.
absl::Status RequireInitialWeightsDigest(const ExperimentConfig& config);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_INITIAL_WEIGHTS_DIGEST_H_
