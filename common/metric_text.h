// A metric value as people read it (nmctl's tables and progress lines, the report's and the dashboard's
// tables): at most 4 significant digits below 1000, whole numbers up to 100,000, then three significant
// digits with an SI prefix (FLOPs: 42.9G).
#ifndef NMSPARSE_COMMON_METRIC_TEXT_H_
#define NMSPARSE_COMMON_METRIC_TEXT_H_

#include <string>

namespace nmsparse {

std::string FormatMetric(double value);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_METRIC_TEXT_H_
