// A metric value as people read it (nmctl's tables and progress lines, the report's and the dashboard's
// tables): at most 4 significant digits below 1000, whole numbers up to 100,000, then three significant
// digits with an SI prefix (FLOPs: 42.9G).
#ifndef NMSPARSE_COMMON_METRIC_TEXT_H_
#define NMSPARSE_COMMON_METRIC_TEXT_H_

#include <string>

namespace nmsparse {

std::string FormatMetric(double value);

// A label as people read it: a decimal number that is not a whole number (a random axis's draw,
// "0.0002487869161216888") in FormatMetric's form ("0.0002488"); any other label ("2:4", "16", "srste") as
// it is. Display only: the stored label is unchanged.
std::string FormatLabelValue(const std::string& label);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_METRIC_TEXT_H_
