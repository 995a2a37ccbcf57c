// A piece of a file name made from user text (a metric name in a figure's file, labels in a TensorBoard
// run directory): never a path component of its own, never hidden, never longer than asked.
#ifndef NMSPARSE_REPORT_FILE_NAME_PART_H_
#define NMSPARSE_REPORT_FILE_NAME_PART_H_

#include <cstddef>
#include <string>

namespace nmsparse::report {

// `text` with every byte outside [A-Za-z0-9._=-] (a '/' among them) as '_', a leading '.' as '_', cut to
// `max_bytes`.
std::string FileNamePart(const std::string& text, size_t max_bytes);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_FILE_NAME_PART_H_
