// Structure decay (SDGF, docs/sparsity-method.md §4): which N:M a layer uses at which epoch. Plain
// C++ so that the coordinator validates every N:M a run will ever use, and the trainer's engine uses the same
// table.
#ifndef NMSPARSE_SCHEMAS_STRUCTURE_DECAY_H_
#define NMSPARSE_SCHEMAS_STRUCTURE_DECAY_H_

#include <string>
#include <utility>
#include <vector>

#include "schemas/sparsity_config.h"

namespace nmsparse {

// dense_epochs = int(dense_fraction * T) and fine_tune_epochs = int(fine_tune_fraction * T), computed in
// double as the reference does (§3).
int DenseEpochs(const SparsityConfig& config, int total_epochs);
int FineTuneEpochs(const SparsityConfig& config, int total_epochs);

// The K stages of `type` for `target`, last = target (§4):
//   SPARSIFY: K = floor(log2(M/N)) + 1; stage 0 = (M-1):M, stage i >= 1 = (M/2^i):M.
//   FINE:     K = log2(S) + 1 with S = start_multiple (default 8 -> K = 4); stage i = N*S/2^i : M*S/2^i.
//   DENSIFY:  same K; stage i = N : M*S/2^i.
// For targets whose table would not end at the target (3:8 under SPARSIFY ends at 4:8) the last stage is
// replaced by the target.
std::vector<NM> StructureDecayTable(StructureDecayType type, NM target, int start_multiple);

// (start epoch, N:M) of every stage for `target`: stage i starts at d + int(i * (T - d - f) / K); the last
// holds through the fine-tune window; when starts coincide the later stage wins (the earlier is dropped).
// Without structure_decay_flag: one stage {d, target}.
std::vector<std::pair<int, NM>> StructureDecayStages(const SparsityConfig& config, int total_epochs,
                                                     NM target);

// The same for the FF/O/C target (n_sparsity:m_sparsity).
std::vector<std::pair<int, NM>> StructureDecayStages(const SparsityConfig& config, int total_epochs);

// Empty when every stage of the FF/O/C target's structure decay gets an epoch of its own. Otherwise (a
// schedule too short for the SDGF stages: at 1 epoch a 1:8 plan is just 1:8) one sentence naming the planned
// stages, those that never train and the schedule.epochs (SparsityEpochs) that would give each an epoch.
// nmctl validate and submit print it as a warning.
std::string SkippedStagesWarning(const SparsityConfig& config, int total_epochs);

// The N:M `target` is replaced by at `epoch` (0-based): the stage with the latest start <= epoch, the first
// stage before it starts (epochs before d are dense anyway). Derived from the epoch alone, so it survives a
// resume.
NM StageAtEpoch(const SparsityConfig& config, int total_epochs, NM target, int epoch);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_STRUCTURE_DECAY_H_
