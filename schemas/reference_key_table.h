// The timm train.py keys that map onto no spec key, each with what a flat reference config may do with it
// (schemas/reference_config.h): a key that cannot change the training's mathematics is accepted with any
// value; a key that would change it is accepted only at timm's default (or null) and is otherwise an error,
// since nmsparse does not implement it. docs/nmtrain.md's
// table of these keys is generated from this one (//schemas:spec_docs_writer).
#ifndef NMSPARSE_SCHEMAS_REFERENCE_KEY_TABLE_H_
#define NMSPARSE_SCHEMAS_REFERENCE_KEY_TABLE_H_

#include <string>
#include <vector>

namespace nmsparse {

enum class ReferenceKeyUse {
  kHarmless,       // Any value: it cannot change what is trained (logging, devices, loader speed...).
  kUnimplemented,  // timm's default (or null) only; another value is an error.
};

struct UnmappedReferenceKey {
  std::string key;
  ReferenceKeyUse use = ReferenceKeyUse::kHarmless;
  std::string timm_default;  // YAML text; unused for harmless keys.
  std::string why;           // Why a harmless key is harmless, or what an unimplemented key would change.
};

// Every unmapped key, sorted by key.
const std::vector<UnmappedReferenceKey>& UnmappedReferenceKeys();

// The entry of `key`, or nullptr.
const UnmappedReferenceKey* FindUnmappedReferenceKey(const std::string& key);

// The markdown table of UnmappedReferenceKeys(): key, accepted values, reason.
std::string UnmappedReferenceKeysMarkdown();

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_REFERENCE_KEY_TABLE_H_
