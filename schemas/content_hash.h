// Content hashes of experiment specs: the coordinator's run identity (reuse of succeeded runs, idempotency).
// Separate from //schemas:experiment_config so that the trainer does not link OpenSSL.
#ifndef NMSPARSE_SCHEMAS_CONTENT_HASH_H_
#define NMSPARSE_SCHEMAS_CONTENT_HASH_H_

#include <string>

#include "schemas/experiment_config.h"

namespace nmsparse {

// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(const std::string& data);

// Lowercase hex SHA-256 of CanonicalYaml(config): equal for specs that differ only in key order, formatting,
// case of enum values or defaults written out; different whenever any value differs.
std::string ContentHash(const ExperimentConfig& config);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_CONTENT_HASH_H_
