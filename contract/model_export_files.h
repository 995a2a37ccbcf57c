// The files of a run's exported model (docs/interop.md): what `nmtrain --export` writes, what nmworker
// uploads, what the coordinator relays and what `nmctl export-model` writes. A fixed list, so that a name
// that crossed a process boundary is checked against it and never used as a path. Standard library only.
#ifndef NMSPARSE_CONTRACT_MODEL_EXPORT_FILES_H_
#define NMSPARSE_CONTRACT_MODEL_EXPORT_FILES_H_

#include <string>

namespace nmsparse::contract {

constexpr char kExportWeightsFile[] = "model.safetensors";
constexpr char kExportConfigFile[] = "config.json";
constexpr char kExportSparsityFile[] = "sparsity.json";
constexpr char kExportCardFile[] = "README.md";

// In the order they are sent.
constexpr const char* kExportFiles[] = {kExportConfigFile, kExportSparsityFile, kExportCardFile,
                                        kExportWeightsFile};

inline bool IsExportFile(const std::string& name) {
  for (const char* file : kExportFiles) {
    if (name == file) return true;
  }
  return false;
}

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_MODEL_EXPORT_FILES_H_
