#include "schemas/content_hash.h"

#include <openssl/evp.h>

namespace nmsparse {

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
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
