// nmctl's exit codes, as documented in docs/nmctl.md.
#ifndef NMSPARSE_CLI_NMCTL_EXIT_CODES_H_
#define NMSPARSE_CLI_NMCTL_EXIT_CODES_H_

namespace nmsparse::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitServerError = 1;  // RPC failure, coordinator unreachable, server-side error.
inline constexpr int kExitUsage = 2;        // Bad command line, or a spec that fails validation.
inline constexpr int kExitNotFound = 3;     // Unknown sweep or run id, missing file.
inline constexpr int kExitRunFailed =
    4;  // watch/follow: the run (or a run of the sweep) ended FAILED or CANCELLED (STOPPED_EARLY
        // by the sweep's early-stopping policy is 0).

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_NMCTL_EXIT_CODES_H_
