// Protobuf messages as JSON, one rule for nmctl's --json and the dashboard's /api answers: with the .proto
// field names in their declared order, enums by name, every scalar field present, and 64-bit integers (ids,
// counts, times in ms) as JSON numbers. Protobuf's own JSON mapping writes 64-bit integers as strings while
// `export --format json` writes numbers; this is one rule for every command. Built on nlohmann::ordered_json
// (Debian nlohmann-json3-dev), which keeps key order, so tables stay in row and column order.
#ifndef NMSPARSE_COMMON_PROTO_JSON_H_
#define NMSPARSE_COMMON_PROTO_JSON_H_

#include <string>

#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace nmsparse {

using Json = nlohmann::ordered_json;

// The message as JSON (nmsparse's API messages; well-known types such as google.protobuf.Struct are not among
// them and would print as their raw fields).
Json ToJson(const google::protobuf::Message& message);

// JSON text: indented by two when `pretty`, else one line; valid UTF-8 (invalid bytes as U+FFFD) with every
// display control escaped (common/safe_json.h).
std::string ToJsonText(const Json& json, bool pretty);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_PROTO_JSON_H_
