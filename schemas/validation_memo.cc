#include "schemas/validation_memo.h"

#include <cstring>

#include "schemas/sparsity_config.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {
namespace {

// Appends the bytes of a number, or a string with its length: an unambiguous key.
template <typename T>
void Put(T value, std::string* key) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  key->append(bytes, sizeof(T));
}
void Put(const std::string& text, std::string* key) {
  Put(text.size(), key);
  key->append(text);
}

void PutSparsity(const SparsityConfig& s, std::string* key) {
  for (int v : {static_cast<int>(s.sparsity_type), s.nm.n, s.nm.m, s.nm_qkv.n, s.nm_qkv.m,
                static_cast<int>(s.decay_type), static_cast<int>(s.structure_decay_flag),
                static_cast<int>(s.structure_decay_type), s.structure_decay_start_multiple,
                static_cast<int>(s.sparse_dim)}) {
    Put(v, key);
  }
  for (double v : {s.decay_coef, s.dense_fraction, s.fine_tune_fraction, s.prune_rate, s.srste_lambda}) {
    Put(v, key);
  }
  Put(s.locations.size(), key);
  for (SparsityLocation loc : s.locations) Put(static_cast<int>(loc), key);
  Put(s.phases.size(), key);
  for (const PhaseSpec& p : s.phases) {
    Put(static_cast<int>(p.kind), key);
    Put(p.fraction, key);
  }
  // Dynamic groups (§7) by their canonical text: exact (FormatDouble) and only paid by dynamic configs.
  Put(s.dynamic.size(), key);
  for (const DynamicSparsityGroup& g : s.dynamic) Put(YAML::Dump(DynamicSparsityGroupToYaml(g)), key);
}

// Everything ValidateExperiment reads.
std::string ValidationKey(const ExperimentConfig& c) {
  std::string key;
  Put(c.model.name, &key);
  for (int v : {c.model.img_size, c.model.in_chans, c.model.num_classes, c.data.batch_size, c.resources.gpus,
                c.schedule.epochs}) {
    Put(v, &key);
  }
  Put(c.data.dataset, &key);
  Put(c.data.path.empty(), &key);
  Put(c.schedule.warmup_epochs, &key);
  PutSparsity(c.sparsity, &key);
  return key;
}

}  // namespace

absl::Status ValidationMemo::Validate(const ExperimentConfig& config) {
  std::string key = ValidationKey(config);
  auto it = results_.find(key);
  if (it != results_.end()) return it->second;
  absl::Status status = ValidateExperiment(config);
  results_.emplace(std::move(key), status);
  return status;
}

}  // namespace nmsparse
