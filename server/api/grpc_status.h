// absl::Status -> grpc::Status (the canonical codes share their numbers).
#ifndef NMSPARSE_SERVER_API_GRPC_STATUS_H_
#define NMSPARSE_SERVER_API_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace nmsparse::server {

inline grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_API_GRPC_STATUS_H_
