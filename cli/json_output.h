// nmctl's --json: protobuf messages as JSON with the .proto field names in their declared order, enums by
// name, every scalar field present, and 64-bit integers (ids, counts, times in ms) as JSON numbers.
// Protobuf's own JSON mapping writes 64-bit integers as strings while `export --format json` writes numbers;
// this is one rule for every command. Built on nlohmann::ordered_json (Debian nlohmann-json3-dev), which
// keeps key order, so tables stay in row and column order.
#ifndef NMSPARSE_CLI_JSON_OUTPUT_H_
#define NMSPARSE_CLI_JSON_OUTPUT_H_

#include <string>

#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace nmsparse::cli {

using Json = nlohmann::ordered_json;

// The message as JSON (nmsparse's API messages; well-known types such as google.protobuf.Struct are not among
// them and would print as their raw fields).
Json ToJson(const google::protobuf::Message& message);

// JSON text: indented by two when `pretty`, else one line; valid UTF-8 (invalid bytes as U+FFFD) with every
// display control escaped (common/safe_json.h).
std::string ToJsonText(const Json& json, bool pretty);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_JSON_OUTPUT_H_
