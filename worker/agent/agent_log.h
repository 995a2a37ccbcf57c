// nmworker's log lines on stderr: a UTC timestamp and the message.
#ifndef NMSPARSE_WORKER_AGENT_AGENT_LOG_H_
#define NMSPARSE_WORKER_AGENT_AGENT_LOG_H_

#include "absl/strings/string_view.h"

namespace nmsparse::agent {

void AgentLog(absl::string_view message);

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_AGENT_LOG_H_
