// Confined dataset paths: a run may read data only from under the directories this worker was started with
// (nmworker --data_root, repeatable). The check runs when a run is assigned, before any rank starts, on the
// path nmtrain would open (data.path, else the dataset's default location, relative paths from the run
// directory), after resolving symlinks and "..". It cannot run at submission: only the worker knows its
// roots.
#ifndef NMSPARSE_WORKER_AGENT_DATA_ROOTS_H_
#define NMSPARSE_WORKER_AGENT_DATA_ROOTS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nmsparse::agent {

// Without --data_root: Debian's Fashion-MNIST directory, $NMSPARSE_FASHION_MNIST when set, and the work dir.
std::vector<std::string> DefaultDataRoots(const std::string& work_dir);

// The directory nmtrain reads for `resolved_spec` (canonical YAML) when started in `run_dir`; "" for a
// dataset with no files (synthetic). InvalidArgument when the spec cannot be read.
absl::StatusOr<std::string> DatasetDirectory(const std::string& resolved_spec, const std::string& run_dir);

// The file or folder of the run's first weights (model.initial_checkpoint), relative paths from `run_dir`;
// "" when the run starts from random weights. InvalidArgument when the spec cannot be read.
absl::StatusOr<std::string> InitialCheckpointPath(const std::string& resolved_spec,
                                                  const std::string& run_dir);

// The check nmworker runs before a run starts: OK when the run reads no files, or when its dataset directory
// (DatasetDirectory) and its initial weights (InitialCheckpointPath) are under `roots` (CheckUnderDataRoots):
// a weights file is data like any other, confined the same way. A relative data.path is resolved from
// `run_dir`, as nmtrain, started there, resolves it: the run directory is created first when missing (a first
// attempt), since ".." can only be resolved from a directory that exists.
absl::Status CheckRunDataAccess(const std::string& resolved_spec, const std::string& run_dir,
                                const std::vector<std::string>& roots);

// OK when `path`, with symlinks resolved, is one of `roots` (also resolved) or below one. Otherwise
// PermissionDenied: "KEY PATH (resolves to REAL) is outside this worker's data roots [R1, R2]
// (nmworker --data_root)"; a path that does not exist is refused the same way, naming it.
absl::Status CheckUnderDataRoots(const std::string& path, const std::vector<std::string>& roots,
                                 const std::string& key = "data.path");

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_DATA_ROOTS_H_
