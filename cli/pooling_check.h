// The rule `nmctl compare` and `nmctl report` share: a grid axis their table does not show is averaged over
// (pooled) only when the user names it with --pool AXIS; 25 learning rates are not 25 repeats.
#ifndef NMSPARSE_CLI_POOLING_CHECK_H_
#define NMSPARSE_CLI_POOLING_CHECK_H_

#include "absl/status/status.h"
#include "cli/command.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::cli {

// InvalidArgument naming the axes the table would pool without being asked (--pool AXIS in context's
// arguments), or a --pool AXIS that the table does not leave out.
absl::Status CheckPooling(const CommandContext& context, const v1::Sweep& sweep);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_POOLING_CHECK_H_
