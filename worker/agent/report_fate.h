// What the agent does with a report once the coordinator has answered it. A report stays in the outbox until
// the coordinator takes it or refuses it for good; the rule is in docs/nmworker.md ("Reports").
#ifndef NMSPARSE_WORKER_AGENT_REPORT_FATE_H_
#define NMSPARSE_WORKER_AGENT_REPORT_FATE_H_

#include "absl/status/status.h"

namespace nmsparse::agent {

enum class ReportFate {
  // OK: stored (or knowingly not stored, past a run's cap). Removed from the outbox.
  kDelivered,
  // Not taken this time, nor refused: the coordinator is away, overloaded or restarting, or its storage
  // fails (a full disk answers RESOURCE_EXHAUSTED or UNAVAILABLE), or it failed unexpectedly (INTERNAL,
  // UNKNOWN, DATA_LOSS). Kept, and sent again, in order, after a bounded exponential back-off.
  kRetry,
  // FAILED_PRECONDITION or NOT_FOUND: the attempt is not the run's current one (superseded after a lost
  // lease, cancelled, already ended) or the run is unknown. Its ranks are stopped and its reports dropped.
  kFenced,
  // INVALID_ARGUMENT, OUT_OF_RANGE, PERMISSION_DENIED, UNAUTHENTICATED, ALREADY_EXISTS, UNIMPLEMENTED: the
  // same report can never be taken. Dropped, with a line in the agent's log.
  kRefused,
};

ReportFate FateOf(const absl::Status& status);

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_REPORT_FATE_H_
