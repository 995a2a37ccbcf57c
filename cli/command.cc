#include "cli/command.h"

#include <ostream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace nmsparse::cli {

CoordinatorConnection& CommandContext::connection() const {
  if (connection_ == nullptr) connection_ = std::make_unique<CoordinatorConnection>(coordinator, security);
  return *connection_;
}

absl::StatusOr<int64_t> IdArgument(const CommandContext& context, const std::string& what) {
  if (context.args->positional.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("'", context.args->command, "' takes one ", what));
  }
  return ParseId(context.args->positional[0], what);
}

int Fail(const CommandContext& context, const absl::Status& status) {
  *context.err << "nmctl: " << status.message() << "\n";
  return ExitCodeFor(status);
}

void PrintJson(const CommandContext& context, const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) json = "{}";
  *context.out << json;
  if (json.empty() || json.back() != '\n') *context.out << "\n";
}

}  // namespace nmsparse::cli
