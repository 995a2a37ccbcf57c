// Training phases of a sparsity recipe (docs/sparsity-method.md §3): which epochs are dense, sparse or
// fine-tune (hard mask), and j, the optimizer step count inside the sparse phase. Everything is derived from
// (epoch, global_step), never from in-memory history, so a run resumed from a checkpoint continues exactly.
// Plain C++ (no LibTorch).
#ifndef NMSPARSE_WORKER_SPARSITY_PHASE_SCHEDULE_H_
#define NMSPARSE_WORKER_SPARSITY_PHASE_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"

namespace nmsparse {

// Epochs [begin_epoch, end_epoch) of one phase.
struct PhaseSegment {
  PhaseKind kind = PhaseKind::kSparse;
  int begin_epoch = 0;
  int end_epoch = 0;
};

struct PhaseState {
  PhaseKind kind = PhaseKind::kDense;
  int segment = 0;  // Index into PhaseSchedule::segments().
  // j: optimizer steps since the first step of the current sparse run (a run of consecutive sparse and
  // fine-tune segments), starting at 0. 0 in dense phases.
  int64_t sparse_step = 0;
};

class PhaseSchedule {
 public:
  // The phases laid over T = `span_epochs` (0: `total_epochs`), the reference's total_epochs: its train.py's
  // `epochs`, while the run trains `total_epochs` (cooldown included; schemas/trained_epochs.h). Without
  // `config.phases`: dense epochs [0, d), d = int(dense_fraction * T); fine-tune epochs e > T - f,
  // f = int(fine_tune_fraction * T) (strictly greater, as the reference, also past T: with f = 0 epoch T is
  // sparse and the later ones fine-tune); sparse in between. With a phase list ({kind, fraction of T}, in
  // order), segment k ends at epoch floor(T * sum of fractions 0..k + 1e-9) and the last one at the run's
  // end; fractions must be > 0 and sum to 1.
  static absl::StatusOr<PhaseSchedule> Create(const SparsityConfig& config, int total_epochs,
                                              int span_epochs = 0);

  // The phase at `epoch` (clamped into [0, total_epochs)) and j for the optimizer step `global_step`
  // (0-based, the step about to be taken; steps_per_epoch optimizer steps per epoch).
  PhaseState At(int epoch, int64_t global_step, int64_t steps_per_epoch) const;

  const std::vector<PhaseSegment>& segments() const { return segments_; }
  int total_epochs() const { return total_epochs_; }          // The run's.
  int span_epochs() const { return span_epochs_; }            // T, which the phases and SDGF stages divide.
  int dense_epochs() const { return dense_epochs_; }          // d (legacy form; 0 with a phase list).
  int fine_tune_epochs() const { return fine_tune_epochs_; }  // f (legacy form; 0 with a phase list).

 private:
  std::vector<PhaseSegment> segments_;
  int total_epochs_ = 0;
  int span_epochs_ = 0;
  int dense_epochs_ = 0;
  int fine_tune_epochs_ = 0;
};

// "dense", "sparse" or "fine_tune".
std::string PhaseName(PhaseKind kind);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_PHASE_SCHEDULE_H_
