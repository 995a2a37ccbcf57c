// TensorBoard's HParams plugin summaries for a run's event file (report/tfevents.h), so that the HParams tab
// lists each exported run with its swept hyperparameters (the run's labels: numbers as numbers, other text
// as strings) and its final metrics (the "final/<name>" scalars), and whether it succeeded. Each is one
// Summary value tagged "_hparams_/experiment", "_hparams_/session_start_info" or "_hparams_/session_end_info"
// whose metadata carries the plugin's HParamsPluginData, as TensorBoard's own hparams summary_v2 writes them.
#ifndef NMSPARSE_REPORT_TFEVENTS_HPARAMS_H_
#define NMSPARSE_REPORT_TFEVENTS_HPARAMS_H_

#include "report/sweep_data.h"
#include "tensorboard/event.pb.h"

namespace nmsparse::report {

// The experiment: the run's label axes as hparams, its final metrics' tags as metrics. Each run's file holds
// one, from the same sweep (TensorBoard reads the first it finds).
tensorboard::Event HparamsExperimentEvent(const RunData& run);

// The run's hyperparameters, at its start.
tensorboard::Event HparamsSessionStartEvent(const RunData& run);

// How it ended (success, failure, or still running), at its end.
tensorboard::Event HparamsSessionEndEvent(const RunData& run);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_TFEVENTS_HPARAMS_H_
