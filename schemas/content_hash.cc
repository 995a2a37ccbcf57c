#include "schemas/content_hash.h"

#include "common/sha256_stream.h"

namespace nmsparse {

std::string Sha256Hex(const std::string& data) {
  Sha256Stream sha;
  sha.Update(data.data(), data.size());
  return sha.HexDigest();
}

bool HasReducedIdentity(const ExperimentConfig& config) {
  return config.sparsity.sparsity_type == SparsityType::kDense && !config.sparsity.IsDynamic();
}

ExperimentConfig IdentityConfig(const ExperimentConfig& config) {
  if (!HasReducedIdentity(config)) return config;
  ExperimentConfig identity = config;
  const SparsityConfig& given = config.sparsity;
  SparsityConfig& s = identity.sparsity;
  s = SparsityConfig{};  // The defaults, then what a dense run does read.
  s.sparsity_type = SparsityType::kDense;
  s.dense_fraction = given.dense_fraction;
  s.fine_tune_fraction = given.fine_tune_fraction;
  s.phases = given.phases;
  return identity;
}

std::string ContentHash(const ExperimentConfig& config) {
  return HasReducedIdentity(config) ? Sha256Hex(CanonicalYaml(IdentityConfig(config)))
                                    : LegacyContentHash(config);
}

std::string LegacyContentHash(const ExperimentConfig& config) { return Sha256Hex(CanonicalYaml(config)); }

}  // namespace nmsparse
