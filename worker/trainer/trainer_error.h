// nmtrain's exit codes (defined in the contract with the worker agent) and the error that carries one.
#ifndef NMSPARSE_WORKER_TRAINER_TRAINER_ERROR_H_
#define NMSPARSE_WORKER_TRAINER_TRAINER_ERROR_H_

#include <stdexcept>
#include <string>

#include "contract/nmtrain_exit_codes.h"

namespace nmsparse {

using contract::kExitData;
using contract::kExitDistributed;
using contract::kExitOk;
using contract::kExitStorage;
using contract::kExitTerminated;
using contract::kExitTraining;
using contract::kExitUsage;

// An error with the exit code nmtrain ends with.
class TrainerError : public std::runtime_error {
 public:
  TrainerError(int exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_TRAINER_ERROR_H_
