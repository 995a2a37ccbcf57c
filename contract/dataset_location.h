// Where nmtrain reads a dataset from when the spec gives no data.path: nmtrain opens it there, and nmworker
// checks it against its data roots before starting a run (worker/agent/data_roots.h). Standard library only,
// like all of contract/.
#ifndef NMSPARSE_CONTRACT_DATASET_LOCATION_H_
#define NMSPARSE_CONTRACT_DATASET_LOCATION_H_

#include <cstdlib>
#include <string>

namespace nmsparse {

constexpr char kFashionMnistDefaultDir[] = "/usr/share/datasets/fashion-mnist";  // Debian's package
constexpr char kFashionMnistDirVariable[] = "NMSPARSE_FASHION_MNIST";            // where it is elsewhere

// The directory Fashion-MNIST is read from: `dir` when given (the spec's data.path), else
// $NMSPARSE_FASHION_MNIST when set, else Debian's kFashionMnistDefaultDir.
inline std::string FashionMnistDir(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* from_env = std::getenv(kFashionMnistDirVariable);
  return from_env != nullptr && *from_env != '\0' ? from_env : kFashionMnistDefaultDir;
}

}  // namespace nmsparse

#endif  // NMSPARSE_CONTRACT_DATASET_LOCATION_H_
