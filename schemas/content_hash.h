// Content hashes of experiment specs: the coordinator's run identity (reuse of succeeded runs, idempotency).
// Separate from //schemas:experiment_config so that the trainer does not link OpenSSL.
#ifndef NMSPARSE_SCHEMAS_CONTENT_HASH_H_
#define NMSPARSE_SCHEMAS_CONTENT_HASH_H_

#include <string>

#include "schemas/experiment_config.h"

namespace nmsparse {

// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(const std::string& data);

// The config whose canonical YAML identifies a run: `config` itself, except that a dense run (sparsity_type
// DENSE, no dynamic groups) has the sparsity keys that cannot change what it trains reset to their
// defaults: N:M and its Q/K/V ratio, decay, structure decay, locations, group direction, prune rate, SR-STE's
// lambda. A dense run is then the same run, with one hash, whatever N:M column of a sweep it sits in. Its
// phase keys (dense_steps, fine_tune_steps, phases) stay: they shape the schedule it reports.
ExperimentConfig IdentityConfig(const ExperimentConfig& config);

// True when IdentityConfig changes `config` (a dense run), so its hash differs from LegacyContentHash's.
bool HasReducedIdentity(const ExperimentConfig& config);

// Lowercase hex SHA-256 of CanonicalYaml(IdentityConfig(config)): equal for specs that differ only in key
// order, formatting, case of enum values or defaults written out (and, for dense runs, in the keys
// IdentityConfig resets); different whenever any other value differs.
std::string ContentHash(const ExperimentConfig& config);

// The hash before dense runs ignored their N:M keys: SHA-256 of CanonicalYaml(config). Equal to ContentHash
// for every run that is not dense. Runs stored before keep it, so the coordinator's reuse lookup tries it
// after ContentHash.
std::string LegacyContentHash(const ExperimentConfig& config);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_CONTENT_HASH_H_
