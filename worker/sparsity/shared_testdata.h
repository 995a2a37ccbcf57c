// Finds ../shared (the specs and golden data beside the repository) from a test, in a Bazel sandbox or not.
#ifndef NMSPARSE_WORKER_SPARSITY_SHARED_TESTDATA_H_
#define NMSPARSE_WORKER_SPARSITY_SHARED_TESTDATA_H_

#include <string>

namespace nmsparse {

// The path of `relative` (e.g. "testdata/pgf_golden.json") inside the shared folder: $NMSPARSE_SHARED if
// set, else the first `shared/` found walking up from the working directory or from the real location of
// this package's BUILD file (a runfiles symlink into the source tree under `bazel test`). Empty if none.
std::string FindSharedFile(const std::string& relative);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SHARED_TESTDATA_H_
