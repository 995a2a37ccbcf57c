#include "worker/agent/data_roots.h"

#include <limits.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "contract/dataset_location.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse::agent {
namespace {

// realpath(3): the absolute path with every symlink and ".." resolved; nullopt when it does not exist.
std::optional<std::string> Resolve(const std::string& path) {
  char buffer[PATH_MAX];
  if (realpath(path.c_str(), buffer) == nullptr) return std::nullopt;
  return std::string(buffer);
}

bool IsUnder(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || absl::StartsWith(path, root + "/");
}

}  // namespace

std::vector<std::string> DefaultDataRoots(const std::string& work_dir) {
  std::vector<std::string> roots = {kFashionMnistDefaultDir};
  const char* fashion_mnist = std::getenv(kFashionMnistDirVariable);
  if (fashion_mnist != nullptr && *fashion_mnist != '\0') roots.push_back(fashion_mnist);
  roots.push_back(work_dir);
  return roots;
}

absl::StatusOr<std::string> DatasetDirectory(const std::string& resolved_spec, const std::string& run_dir) {
  std::string dataset = "fashion_mnist", path;
  try {
    const YAML::Node data = YAML::Load(resolved_spec)["data"];
    if (data && data["dataset"]) dataset = data["dataset"].as<std::string>();
    if (data && data["path"]) path = data["path"].as<std::string>();
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("the run's resolved spec cannot be read: ", e.what()));
  }
  if (dataset == "synthetic") return std::string();
  if (dataset == "fashion_mnist") path = FashionMnistDir(path);
  if (!path.empty() && path[0] != '/') path = absl::StrCat(run_dir, "/", path);
  return path;
}

absl::StatusOr<std::string> InitialCheckpointPath(const std::string& resolved_spec,
                                                  const std::string& run_dir) {
  std::string path;
  try {
    const YAML::Node model = YAML::Load(resolved_spec)["model"];
    if (model && model.IsMap() && model["initial_checkpoint"])
      path = model["initial_checkpoint"].as<std::string>();
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("the run's resolved spec cannot be read: ", e.what()));
  }
  if (!path.empty() && path[0] != '/') path = absl::StrCat(run_dir, "/", path);
  return path;
}

absl::Status CheckRunDataAccess(const std::string& resolved_spec, const std::string& run_dir,
                                const std::vector<std::string>& roots) {
  absl::StatusOr<std::string> directory = DatasetDirectory(resolved_spec, run_dir);
  if (!directory.ok()) return directory.status();
  absl::StatusOr<std::string> weights = InitialCheckpointPath(resolved_spec, run_dir);
  if (!weights.ok()) return weights.status();
  if (directory->empty() && weights->empty()) return absl::OkStatus();  // No files to read.
  if (absl::StartsWith(*directory, run_dir + "/") || absl::StartsWith(*weights, run_dir + "/")) {
    std::error_code error;
    std::filesystem::create_directories(run_dir, error);
    if (error) return absl::UnavailableError(absl::StrCat("cannot create ", run_dir, ": ", error.message()));
  }
  if (!directory->empty()) {
    if (absl::Status s = CheckUnderDataRoots(*directory, roots); !s.ok()) return s;
  }
  if (weights->empty()) return absl::OkStatus();
  return CheckUnderDataRoots(*weights, roots, "model.initial_checkpoint");
}

absl::Status CheckUnderDataRoots(const std::string& path, const std::vector<std::string>& roots,
                                 const std::string& key) {
  const std::string named = absl::StrCat(key, " ", path, " ");
  const std::string where =
      absl::StrCat("this worker's data roots [", absl::StrJoin(roots, ", "), "] (nmworker --data_root)");
  std::optional<std::string> real = Resolve(path);
  if (!real)
    return absl::PermissionDeniedError(
        absl::StrCat(named, "does not exist; data is read from under ", where));
  for (const std::string& root : roots) {
    std::optional<std::string> real_root = Resolve(root);
    if (real_root && IsUnder(*real, *real_root)) return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat(
      named, *real == path ? "" : absl::StrCat("(resolves to ", *real, ") "), "is outside ", where));
}

}  // namespace nmsparse::agent
