// Which answers keep a report in the outbox: every transient one, storage failures included.
#include "worker/agent/report_fate.h"

#include <gtest/gtest.h>

namespace nmsparse::agent {
namespace {

TEST(ReportFateTest, TransientAnswersKeepTheReport) {
  // What nmserver answers while its database's disk is full (RESOURCE_EXHAUSTED), its storage fails otherwise
  // (UNAVAILABLE), or it is away; and the unexpected failures, which dropping would make final.
  for (absl::StatusCode code :
       {absl::StatusCode::kResourceExhausted, absl::StatusCode::kUnavailable,
        absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kAborted, absl::StatusCode::kInternal,
        absl::StatusCode::kUnknown, absl::StatusCode::kDataLoss, absl::StatusCode::kCancelled}) {
    EXPECT_EQ(FateOf(absl::Status(code, "x")), ReportFate::kRetry) << absl::StatusCodeToString(code);
  }
}

TEST(ReportFateTest, FencedAttemptsAndRefusalsAreFinal) {
  EXPECT_EQ(FateOf(absl::OkStatus()), ReportFate::kDelivered);
  EXPECT_EQ(FateOf(absl::FailedPreconditionError("run 3 attempt 1 is stale")), ReportFate::kFenced);
  EXPECT_EQ(FateOf(absl::NotFoundError("no run with id 3")), ReportFate::kFenced);
  for (absl::StatusCode code : {absl::StatusCode::kInvalidArgument, absl::StatusCode::kOutOfRange,
                                absl::StatusCode::kPermissionDenied, absl::StatusCode::kUnauthenticated,
                                absl::StatusCode::kAlreadyExists, absl::StatusCode::kUnimplemented}) {
    EXPECT_EQ(FateOf(absl::Status(code, "x")), ReportFate::kRefused) << absl::StatusCodeToString(code);
  }
}

}  // namespace
}  // namespace nmsparse::agent
