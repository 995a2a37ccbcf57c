// The epochs a run trains: create_scheduler_v2's num_epochs, as timm's train.py computes it from the spec's
// schedule. A cosine schedule trains its cycles, a prefixed warm-up and cooldown_epochs; step, multistep,
// plateau and constant train schedule.epochs and a prefixed warm-up; warmup_cosine (nmsparse's own, the
// warm-up inside schedule.epochs) trains schedule.epochs and cooldown_epochs. The one definition that the
// trainer's scheduler, validation, nmctl, the coordinator and the report share; with cooldown_epochs 0 and
// no prefixed warm-up it is schedule.epochs.
#ifndef NMSPARSE_SCHEMAS_TRAINED_EPOCHS_H_
#define NMSPARSE_SCHEMAS_TRAINED_EPOCHS_H_

#include "schemas/experiment_config.h"

namespace nmsparse {

// Epochs the run of `schedule` (a validated spec's) trains.
int TrainedEpochs(const ScheduleConfig& schedule);

// Epochs the sparsity schedule divides (T of docs/sparsity-method.md §3-4): schedule.epochs, as the reference
// passes train.py's `epochs` as its total_epochs. The dense and fine-tune fractions, the SDGF stages and a
// phase list are laid over them; the epochs trained after (cooldown_epochs) continue the schedule.
int SparsityEpochs(const ScheduleConfig& schedule);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_TRAINED_EPOCHS_H_
