#include "cli/pooling_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/visible_text.h"
#include "report/compare_pivot.h"

namespace nmsparse::cli {

absl::Status CheckPooling(const CommandContext& context, const v1::Sweep& sweep) {
  const std::vector<std::string> pooled = report::PooledGridAxes(sweep.spec());
  const std::vector<std::string> replicates = report::ReplicateGridAxes(sweep.spec());
  const std::vector<std::string> asked = context.args->GetAll("pool");
  for (const std::string& axis : asked) {
    if (std::find(pooled.begin(), pooled.end(), axis) != pooled.end()) continue;
    // Seeds are pooled anyway; naming them is allowed (and the title says so either way).
    if (std::find(replicates.begin(), replicates.end(), axis) != replicates.end()) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "--pool ", VisibleText(axis), ": not a grid axis that sweep ", sweep.id(), "'s table leaves out (",
        pooled.empty() && replicates.empty()
            ? "it leaves none out"
            : absl::StrCat("it leaves out ", absl::StrJoin(pooled, ", "),
                           pooled.empty() || replicates.empty() ? "" : ", ", absl::StrJoin(replicates, ", ")),
        ")"));
  }
  std::vector<std::string> unasked;
  for (const std::string& axis : pooled) {
    if (std::find(asked.begin(), asked.end(), axis) == asked.end()) unasked.push_back(axis);
  }
  if (unasked.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "sweep ", sweep.id(), " has grid axes past the second that the table does not show: ",
      absl::StrJoin(unasked, ", "), "; each cell would average their runs as repeats. Pass --pool ",
      absl::StrJoin(unasked, " --pool "), " to average them anyway (nmctl best ranks every run)"));
}

}  // namespace nmsparse::cli
