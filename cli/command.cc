#include "cli/command.h"

#include <ostream>

#include "absl/strings/str_cat.h"

namespace nmsparse::cli {

CoordinatorConnection& CommandContext::connection() const {
  if (connection_ == nullptr) connection_ = std::make_unique<CoordinatorConnection>(coordinator, security);
  return *connection_;
}

void CommandContext::WriteControl(std::string_view sequence) const {
  if (out_filter != nullptr) return out_filter->WriteControl(sequence);
  *out << sequence;
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
  PrintJson(context, ToJson(message));
}

void PrintJson(const CommandContext& context, const Json& json) {
  *context.out << ToJsonText(json, /*pretty=*/true) << "\n";
}

}  // namespace nmsparse::cli
