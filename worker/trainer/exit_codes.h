// nmtrain's exit codes (docs/nmtrain.md); the worker agent maps them onto run outcomes.
#ifndef NMSPARSE_WORKER_TRAINER_EXIT_CODES_H_
#define NMSPARSE_WORKER_TRAINER_EXIT_CODES_H_

#include <stdexcept>
#include <string>

namespace nmsparse {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;     // Bad command line or spec (unknown key, bad value, N:M that does not fit).
constexpr int kExitData = 3;      // Dataset missing, unreadable or not matching the model.
constexpr int kExitTraining = 4;  // Torch exception, non-finite loss, checkpoint I/O.
constexpr int kExitDistributed = 5;   // Rendezvous failed, a rank died, a collective timed out.
constexpr int kExitTerminated = 143;  // SIGTERM: stopped at a step boundary after writing a checkpoint.

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

#endif  // NMSPARSE_WORKER_TRAINER_EXIT_CODES_H_
