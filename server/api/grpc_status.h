// absl::Status -> grpc::Status (the canonical codes share their numbers), marked as the coordinator's own
// answer (common/coordinator_answer.h) so that a client tells it from a connection that failed.
#ifndef NMSPARSE_SERVER_API_GRPC_STATUS_H_
#define NMSPARSE_SERVER_API_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "common/coordinator_answer.h"
#include "grpcpp/support/status.h"

namespace nmsparse::server {

inline grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()),
                      kCoordinatorAnswerMark);
}

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_API_GRPC_STATUS_H_
