// A run's attempt as the agent names it in its log and in its reports.
#ifndef NMSPARSE_WORKER_AGENT_RUN_ATTEMPT_H_
#define NMSPARSE_WORKER_AGENT_RUN_ATTEMPT_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "nmsparse/v1/worker_gateway.pb.h"

namespace nmsparse::agent {

inline v1::RunAttempt MakeAttempt(int64_t run_id, uint32_t attempt) {
  v1::RunAttempt run;
  run.set_run_id(run_id);
  run.set_attempt(attempt);
  return run;
}

inline std::string AttemptName(const v1::RunAttempt& run) {
  return absl::StrCat("run ", run.run_id(), " attempt ", run.attempt());
}

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_RUN_ATTEMPT_H_
