// nmctl validate's and submit's warnings about the model a run deploys (docs/interop.md): the model
// `nmtrain --export` writes, with every sparse layer hard-masked at its target N:M, is the one the run
// trained only when the last step already used hard masks. Each warning names the key and its value.
#ifndef NMSPARSE_CLI_DEPLOY_WARNINGS_H_
#define NMSPARSE_CLI_DEPLOY_WARNINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schemas/experiment_config.h"

namespace nmsparse::cli {

// Above this D at the last step, the deployable model differs from the trained one: every pruned weight
// still passes more than 0.1% of itself.
inline constexpr double kDeployDecayTolerance = 1e-3;

// D at the run's last optimizer step when that step is in a sparse phase of a decaying recipe (MDGF,
// unstructured decay), with the steps of that sparse phase; nullopt when it uses a hard mask (SR-STE,
// fine-tune, STEP decay) or the steps per epoch are not known from the spec (shards).
std::optional<double> LastStepDecay(const ExperimentConfig& config, int64_t* sparse_steps);

// For a run of the N:M engine (not dense, not dynamic):
//  - the last step is in a sparse phase of a decaying recipe (MDGF, unstructured decay) whose D there is
//    above kDeployDecayTolerance (counted where the spec tells the optimizer steps per epoch, train_steps.h);
//  - sparsity.fine_tune_steps > 0 rounds to 0 fine-tune epochs of the schedule, or a fine_tune entry of
//    sparsity.phases does.
std::vector<std::string> DeployWarnings(const ExperimentConfig& config);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_DEPLOY_WARNINGS_H_
