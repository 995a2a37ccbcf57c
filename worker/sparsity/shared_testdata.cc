#include "worker/sparsity/shared_testdata.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace nmsparse {
namespace {

namespace fs = std::filesystem;

std::string WalkUp(fs::path dir, const std::string& relative) {
  std::error_code ec;
  while (!dir.empty()) {
    const fs::path candidate = dir / "shared" / relative;
    if (fs::exists(candidate, ec)) return candidate.string();
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return "";
}

}  // namespace

std::string FindSharedFile(const std::string& relative) {
  if (const char* env = std::getenv("NMSPARSE_SHARED"); env != nullptr && *env != '\0') {
    return (fs::path(env) / relative).string();
  }
  std::error_code ec;
  std::vector<fs::path> starts = {fs::current_path(ec)};
  const fs::path marker = fs::current_path(ec) / "worker" / "sparsity" / "BUILD.bazel";
  if (fs::is_symlink(marker, ec)) starts.push_back(fs::canonical(marker, ec).parent_path());
  for (const fs::path& start : starts) {
    if (std::string found = WalkUp(start, relative); !found.empty()) return found;
  }
  return "";
}

}  // namespace nmsparse
