// Per-field bounds on the messages nmserver accepts: every string, bytes, repeated and map field of a
// request, found by reflection over the message's descriptor and checked against the table in
// request_bounds.cc (whose values are schemas/limits.h's). A field the table does not name gets
// limits::kMaxStringBytes or limits::kMaxRepeatedCount, and a message's unknown fields together get
// kMaxStringBytes, so a field added to the protos later is bounded without a change here. nmserver checks
// every request with it before anything else; nmctl checks a sweep file's spec with it (ParseSweepYaml), so
// that validate refuses what submit would.
#ifndef NMSPARSE_SCHEMAS_REQUEST_BOUNDS_H_
#define NMSPARSE_SCHEMAS_REQUEST_BOUNDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace nmsparse {

// OK when every field of `message` is within its bound; else InvalidArgument naming the first field past its
// bound, its size and the limit, e.g. "spec.grid[0].values[2].label: 300 bytes, more than the limit of 256
// bytes" or "spec.random[0].choices: 200,000 entries, more than the limit of 100,000 entries". Map entries
// are named by their key ("set[\"optimizer.lr\"].value") when it is short and printable, else by position
// ("set[#3].key"). Fields that a worker's report may carry long and that are cut rather than refused (a
// log line's text, a run's end message) are refused here like any other.
absl::Status CheckRequestBounds(const google::protobuf::Message& message);

// For a worker's report: first cuts those fields in place to their bound (limits::CutText: the start of the
// text and " [N bytes cut]"), as the worker contract says of log lines (docs/reliability.md), then checks
// the rest as CheckRequestBounds.
absl::Status CutAndCheckReportBounds(google::protobuf::Message* report);

// The fields the table bounds by name ("nmsparse.v1.SweepSpec.name"), for the test that each names a field.
std::vector<std::string> FieldsWithOwnBounds();

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_REQUEST_BOUNDS_H_
