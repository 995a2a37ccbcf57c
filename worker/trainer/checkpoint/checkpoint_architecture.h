// The architecture a checkpoint was written for (schemas/model_arch_text.h), and resume's check of it: a run
// keeps its architecture, so a checkpoint of another one is refused, naming each key that differs and both
// values, before its weights are loaded (where the first mismatched shape would be all torch could say).
// Checkpoints written before the record was kept carry none: they load when every tensor fits the model's
// shape, and are otherwise unreadable (docs/nmtrain.md, "Checkpoints").
#ifndef NMSPARSE_WORKER_TRAINER_CHECKPOINT_CHECKPOINT_ARCHITECTURE_H_
#define NMSPARSE_WORKER_TRAINER_CHECKPOINT_CHECKPOINT_ARCHITECTURE_H_

#include <optional>
#include <string>

namespace nmsparse {

// The state archive's key under which SaveCheckpoint records TrainState::architecture.
inline constexpr char kArchitectureKey[] = "architecture";

// The record of the checkpoint in `dir` that LoadCheckpoint would read first (the latest, else the previous):
// "" when it has none (older checkpoints); nullopt when neither file is there or readable (LoadCheckpoint
// then says why).
std::optional<std::string> ReadCheckpointArchitecture(const std::string& dir);

// Throws TrainerError(kExitUsage) naming `dir`, each differing key and both values when `recorded` is not
// empty and differs from `expected` (the run's ArchitectureText).
void CheckCheckpointArchitecture(const std::string& recorded, const std::string& expected,
                                 const std::string& dir);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_CHECKPOINT_CHECKPOINT_ARCHITECTURE_H_
