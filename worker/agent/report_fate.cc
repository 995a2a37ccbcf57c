#include "worker/agent/report_fate.h"

namespace nmsparse::agent {

ReportFate FateOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return ReportFate::kDelivered;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kNotFound:
      return ReportFate::kFenced;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kUnimplemented:
      return ReportFate::kRefused;
    default:  // Dropping a report loses a result for good; sending it again costs a little traffic.
      return ReportFate::kRetry;
  }
}

}  // namespace nmsparse::agent
