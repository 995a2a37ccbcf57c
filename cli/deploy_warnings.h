// nmctl validate's and submit's warnings about the model a run deploys (docs/interop.md): the model
// `nmtrain --export` writes, with every sparse layer hard-masked at its target N:M, is the one the run
// trained only when the last step already used hard masks. Each warning names the key and its value.
#ifndef NMSPARSE_CLI_DEPLOY_WARNINGS_H_
#define NMSPARSE_CLI_DEPLOY_WARNINGS_H_

#include <string>
#include <vector>

#include "schemas/experiment_config.h"

namespace nmsparse::cli {

// Above this D at the last step, the deployable model differs from the trained one: every pruned weight
// still passes more than 0.1% of itself.
inline constexpr double kDeployDecayTolerance = 1e-3;

// For a run of the N:M engine (not dense, not dynamic):
//  - the last step is in a sparse phase of a decaying recipe (MDGF, unstructured decay) whose D there is
//    above kDeployDecayTolerance (counted where the spec tells the optimizer steps per epoch, train_steps.h);
//  - sparsity.fine_tune_steps > 0 rounds to 0 fine-tune epochs of the schedule, or a fine_tune entry of
//    sparsity.phases does.
std::vector<std::string> DeployWarnings(const ExperimentConfig& config);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_DEPLOY_WARNINGS_H_
