#include "worker/trainer/checkpoint/checkpoint_architecture.h"

#include <sys/stat.h>
#include <torch/serialize/input-archive.h>

#include "schemas/model_arch_text.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/checkpoint/checkpoint_digest.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {

// Reads the file once more before LoadCheckpoint does: once per resume, and it keeps the check out of the
// loader, whose first step (model.load) would fail on the first mismatched shape. A damaged file (its digest
// not recorded) is passed over as LoadCheckpoint passes it over.
std::optional<std::string> ReadCheckpointArchitecture(const std::string& dir) {
  for (const std::string& path : {CheckpointPath(dir), PreviousCheckpointPath(dir)}) {
    struct stat st;
    bool unverified = false;
    if (stat(path.c_str(), &st) != 0 || !VerifyCheckpointFile(dir, path, &unverified).ok()) continue;
    try {
      torch::serialize::InputArchive archive, state_archive;
      archive.load_from(path, torch::kCPU);
      archive.read("state", state_archive);
      c10::IValue text;
      return state_archive.try_read(kArchitectureKey, text) ? text.toStringRef() : std::string();
    } catch (const c10::Error&) {
      continue;  // Unreadable: LoadCheckpoint falls back or reports it.
    }
  }
  return std::nullopt;
}

void CheckCheckpointArchitecture(const std::string& recorded, const std::string& expected,
                                 const std::string& dir) {
  if (recorded.empty()) return;
  const std::vector<ArchitectureDifference> differences = ArchitectureDifferences(recorded, expected);
  if (differences.empty()) return;
  throw TrainerError(kExitUsage, "the checkpoint in " + dir + " is of another architecture: " +
                                     DescribeDifferences(differences, "the checkpoint's") +
                                     "; a run keeps its architecture (use another --out)");
}

}  // namespace nmsparse
