// The entries of a folder in sorted (byte) order: how the readers and nmshard number classes and order shards,
// so that the same folder always gives the same labels and the same image order (torchvision sorts likewise).
#ifndef NMSPARSE_WORKER_TRAINER_DATA_DIRECTORY_LISTING_H_
#define NMSPARSE_WORKER_TRAINER_DATA_DIRECTORY_LISTING_H_

#include <string>
#include <vector>

namespace nmsparse {

// The names in `dir` except "." and "..", sorted; empty when `dir` cannot be read (callers that need to tell
// an unreadable folder from an empty one check it first).
std::vector<std::string> SortedNames(const std::string& dir);

// The same without hidden names (a leading '.').
std::vector<std::string> SortedVisibleNames(const std::string& dir);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_DIRECTORY_LISTING_H_
