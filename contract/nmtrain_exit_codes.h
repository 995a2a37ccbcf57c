// nmtrain's exit codes and what they mean to the worker agent that starts it and to the coordinator that
// ends or retries the run (docs/nmtrain.md). Standard library only, like all of contract/.
#ifndef NMSPARSE_CONTRACT_NMTRAIN_EXIT_CODES_H_
#define NMSPARSE_CONTRACT_NMTRAIN_EXIT_CODES_H_

#include <string>

namespace nmsparse::contract {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;     // Bad command line or spec (unknown key, bad value, N:M that does not fit).
constexpr int kExitData = 3;      // Dataset missing, unreadable or not matching the model.
constexpr int kExitTraining = 4;  // Torch exception, non-finite loss, checkpoint I/O.
constexpr int kExitDistributed = 5;  // Rendezvous failed, a rank died, a collective timed out.
// The run directory cannot be written (disk full, read-only, I/O error): the message names the file and the
// OS error, and no temporary file is left. Retried: the disk may have room again, or the next worker may.
constexpr int kExitStorage = 6;
constexpr int kExitTerminated = 143;  // SIGTERM: stopped at a step boundary after writing a checkpoint.
constexpr int kExitKilled = 137;      // SIGKILL (as a shell reports it).

// Whether an exit is permanent: every attempt of the same spec would end the same way, so the coordinator
// ends the run FAILED at once instead of spending its retries. Only a bad spec (or command line) is: a data,
// training or distributed error may be this worker's or this moment's, and a signal is a crash or a stop.
constexpr bool IsPermanentExit(int code) { return code == kExitUsage; }

// What an exit code means, for run messages.
inline std::string DescribeExit(int code) {
  switch (code) {
    case kExitOk:
      return "ok";
    case kExitUsage:
      return "bad spec";
    case kExitData:
      return "data error";
    case kExitTraining:
      return "training error";
    case kExitDistributed:
      return "distributed failure";
    case kExitStorage:
      return "storage error";
    case kExitTerminated:
      return "terminated (SIGTERM)";
    case kExitKilled:
      return "killed (SIGKILL)";
    default:
      return code > 128 ? "killed by signal " + std::to_string(code - 128) : "error";
  }
}

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_NMTRAIN_EXIT_CODES_H_
