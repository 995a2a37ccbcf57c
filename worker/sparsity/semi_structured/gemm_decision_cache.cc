#include "worker/sparsity/semi_structured/gemm_decision_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace nmsparse {
namespace {

constexpr char kHeader[] = "# gpu\tdtype\top\tm\tk\tn\tdense_ms\tsparse_ms";
constexpr char kFileName[] = "semi_structured_timings.tsv";

bool ParseLine(const std::string& line, GemmKey* key, GemmTiming* timing) {
  const std::vector<std::string> f = absl::StrSplit(line, '\t');
  return f.size() == 8 && !f[0].empty() && !f[1].empty() && !f[2].empty() &&
         absl::SimpleAtoi(f[3], &key->m) && absl::SimpleAtoi(f[4], &key->k) &&
         absl::SimpleAtoi(f[5], &key->n) && absl::SimpleAtod(f[6], &timing->dense_ms) &&
         absl::SimpleAtod(f[7], &timing->sparse_ms) && timing->dense_ms > 0 && timing->sparse_ms > 0 &&
         (key->gpu = f[0], key->dtype = f[1], key->op = f[2], true);
}

}  // namespace

GemmDecision DecideGemm(Accelerate accelerate, const std::optional<GemmTiming>& timing, double margin) {
  GemmDecision d;
  d.speedup = timing ? timing->speedup() : 0;
  if (accelerate == Accelerate::kForce) return {true, d.speedup, "accelerate: force"};
  if (accelerate == Accelerate::kOff) return {false, d.speedup, "accelerate: off"};
  if (!timing) return {false, 0, "not timed"};
  d.sparse = timing->dense_ms >= (1.0 + margin) * timing->sparse_ms;
  d.reason = absl::StrFormat("2:4 %.2fx %s %.2fx needed", d.speedup, d.sparse ? ">=" : "<", 1.0 + margin);
  return d;
}

std::string GemmDecisionCache::DefaultPath(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* dir = std::getenv("NMSPARSE_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return absl::StrCat(dir, "/", kFileName);
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : ".", "/.cache/nmsparse/", kFileName);
}

absl::StatusOr<GemmDecisionCache> GemmDecisionCache::Load(const std::string& path) {
  GemmDecisionCache cache(path);
  std::ifstream in(path);
  if (!in) return cache;  // Not written yet.
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    GemmKey key;
    GemmTiming timing;
    if (!ParseLine(line, &key, &timing)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": not a timing line (", kHeader,
                                                     " with positive times): \"", line, "\""));
    }
    cache.Put(key, timing);
  }
  return cache;
}

std::optional<GemmTiming> GemmDecisionCache::Find(const GemmKey& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

namespace {

// mkdir -p of the directories above `path` (failures show at the write that follows).
void MakeParentDirectories(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    ::mkdir(path.substr(0, pos).c_str(), 0755);
  }
}

}  // namespace

absl::Status GemmDecisionCache::Save() const {
  // POSIX calls, not std::filesystem: pip's libtorch.so exports std::filesystem symbols of its own that break
  // ours when both are loaded (a crash in remove_all was seen with LibTorch 2.11).
  MakeParentDirectories(path_);
  const std::string tmp = absl::StrCat(path_, ".tmp.", ::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kHeader << "\n";
    for (const auto& [k, t] : entries_) {
      out << absl::StrFormat("%s\t%s\t%s\t%d\t%d\t%d\t%.6g\t%.6g\n", k.gpu, k.dtype, k.op, k.m, k.k, k.n,
                             t.dense_ms, t.sparse_ms);
    }
    if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0)
    return absl::InternalError(
        absl::StrCat("cannot rename ", tmp, " to ", path_, ": ", std::strerror(errno)));
  return absl::OkStatus();
}

}  // namespace nmsparse
