// A one-line progress bar: "[#######.............]  7/20 epochs".
#ifndef NMSPARSE_CLI_PROGRESS_BAR_H_
#define NMSPARSE_CLI_PROGRESS_BAR_H_

#include <string>

namespace nmsparse::cli {

// `done` of `total` (clamped to [0, total]); `width` is the number of cells between the brackets. With
// total 0 the bar is empty and the count reads "done/?".
std::string RenderProgressBar(double done, double total, int width, const std::string& unit);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_PROGRESS_BAR_H_
