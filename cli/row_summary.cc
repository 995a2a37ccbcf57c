#include "cli/row_summary.h"

#include "absl/strings/str_cat.h"

namespace nmsparse::cli {

RowSummary::RowSummary(size_t total, bool verbose)
    : total_(total), left_out_(verbose || total <= kWholeUpTo ? 0 : total - 2 * kEdgeRows) {}

bool RowSummary::Shown(size_t row) const {
  return left_out_ == 0 || row < kEdgeRows || row >= total_ - kEdgeRows;
}

bool RowSummary::AfterGap(size_t row) const { return left_out_ > 0 && row == total_ - kEdgeRows; }

std::string RowSummary::Note(const std::string& noun, const std::string& how) const {
  if (left_out_ == 0) return "";
  return absl::StrCat("(", left_out_, " more ", noun, "(s) not shown: ", how, ")\n");
}

std::string FormatIndexRanges(const std::vector<int>& sorted_indices) {
  std::string out;
  for (size_t i = 0; i < sorted_indices.size();) {
    size_t j = i;
    while (j + 1 < sorted_indices.size() && sorted_indices[j + 1] == sorted_indices[j] + 1) ++j;
    absl::StrAppend(&out, out.empty() ? "" : ",", sorted_indices[i]);
    if (j > i) absl::StrAppend(&out, "-", sorted_indices[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace nmsparse::cli
