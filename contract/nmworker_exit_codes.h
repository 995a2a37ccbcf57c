// nmworker's exit codes, for whoever starts it (a Slurm job's output and state, systemd, a test): a refused
// registration is told apart from a usage error and from a normal exit, so that a batch system or an operator
// sees that starting the same nmworker again would be refused again. Standard library only, like all of
// contract/.
#ifndef NMSPARSE_CONTRACT_NMWORKER_EXIT_CODES_H_
#define NMSPARSE_CONTRACT_NMWORKER_EXIT_CODES_H_

namespace nmsparse::contract {

constexpr int kWorkerExitOk = 0;     // Stopped by a signal, or left (idle, or Slurm's time-limit warning).
constexpr int kWorkerExitUsage = 2;  // Bad flag, slot list or credential file: nothing was tried.
// The coordinator refused the registration for good (INVALID_ARGUMENT, PERMISSION_DENIED, UNAUTHENTICATED,
// ...: a bad --advertise_addr, an unknown or revoked token): the message names the coordinator's reason. 78
// is sysexits' EX_CONFIG. Unreachable or restarting coordinators are retried instead, never this.
constexpr int kWorkerExitRegistrationRefused = 78;

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_NMWORKER_EXIT_CODES_H_
