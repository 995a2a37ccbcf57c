// Long listings as a summary: the first and last rows and how many were left out between them, unless
// --verbose asks for every row (nmctl submit and validate, whose sweeps may have 50,000 runs).
#ifndef NMSPARSE_CLI_ROW_SUMMARY_H_
#define NMSPARSE_CLI_ROW_SUMMARY_H_

#include <cstddef>
#include <string>
#include <vector>

namespace nmsparse::cli {

class RowSummary {
 public:
  static constexpr size_t kEdgeRows = 5;  // Shown at each end.
  // Listings up to this long are shown whole: leaving 2 of 12 runs out saves nothing and hides them.
  static constexpr size_t kWholeUpTo = 25;

  RowSummary(size_t total, bool verbose);

  bool Shown(size_t row) const;
  // `row` is the first shown after the rows left out: the place of the "..." row.
  bool AfterGap(size_t row) const;
  size_t left_out() const { return left_out_; }
  // "(9990 more run(s) not shown: HOW)\n", or "" when none was left out. `how` says how to list them
  // ("--verbose lists them all"; after a submit, "nmctl runs --sweep 3 lists them all").
  std::string Note(const std::string& noun, const std::string& how = "--verbose lists them all") const;

 private:
  size_t total_;
  size_t left_out_;
};

// Row indices as ranges: {0, 1, 2, 5, 7, 8} -> "0-2,5,7-8", so that a list of 50,000 indices stays short.
std::string FormatIndexRanges(const std::vector<int>& sorted_indices);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_ROW_SUMMARY_H_
