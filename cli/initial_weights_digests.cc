#include "cli/initial_weights_digests.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/sha256_stream.h"
#include "contract/model_export_files.h"
#include "schemas/base_spec.h"
#include "schemas/initial_weights_digest.h"
#include "schemas/yaml_util.h"

namespace nmsparse::cli {
namespace {

constexpr char kPathKey[] = "model.initial_checkpoint";
constexpr char kDigestKey[] = "model.initial_checkpoint_sha256";

absl::StatusOr<std::string> HashFile(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat(kPathKey, ": cannot read ", file, ": ", std::strerror(errno)));
  Sha256Stream sha;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    sha.Update(chunk.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(kPathKey, ": reading ", file, " failed"));
  return sha.HexDigest();
}

// The path a grid value's YAML scalar text names ("" for null or '').
std::string ScalarValue(const std::string& text) {
  absl::StatusOr<YAML::Node> node = yaml_util::LoadYaml(text, kPathKey);
  if (!node.ok() || !node->IsScalar()) return text;
  return node->Scalar();
}

// The value of the last "key=value" of `sets` for `key` as ApplyOverride reads a scalar (schemas/sweep.h):
// the text as given, "" for the key's default (empty, ~ or null); nullopt when none sets it.
std::optional<std::string> LastSet(const std::vector<std::string>& sets, const std::string& key) {
  std::optional<std::string> value;
  for (const std::string& assignment : sets) {
    if (!absl::StartsWith(assignment, key + "=")) continue;
    value = assignment.substr(key.size() + 1);
    const std::string lower = absl::AsciiStrToLower(*value);
    if (lower == "~" || lower == "null") value = "";
  }
  return value;
}

}  // namespace

absl::StatusOr<std::optional<std::string>> WeightsDigests::Of(const std::string& path) {
  if (auto it = known_.find(path); it != known_.end()) return it->second;
  std::optional<std::string> digest;
  struct stat st;
  if (!path.empty() && path[0] == '/' && stat(path.c_str(), &st) == 0) {
    std::string file = path;
    if (S_ISDIR(st.st_mode)) {
      file = absl::StrCat(path, "/", contract::kExportWeightsFile);
      if (stat(file.c_str(), &st) != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(kPathKey, ": the folder ", path, " has no ", contract::kExportWeightsFile));
      }
    }
    absl::StatusOr<std::string> hashed = HashFile(file);
    if (!hashed.ok()) return hashed.status();
    digest = *std::move(hashed);
  }
  known_[path] = digest;
  return digest;
}

absl::Status FillInitialWeightsDigests(v1::SweepSpec* spec, WeightsDigests* digests) {
  // The base (a parse error is left to the expansion, which names its line).
  absl::StatusOr<ExperimentConfig> base = ParseExperimentYaml(spec->base(), "base");
  if (base.ok() && !base->model.initial_checkpoint.empty() && base->model.initial_checkpoint_sha256.empty()) {
    absl::StatusOr<std::optional<std::string>> digest = digests->Of(base->model.initial_checkpoint);
    if (!digest.ok()) return digest.status();
    if (digest->has_value()) {
      base->model.initial_checkpoint_sha256 = **digest;
      spec->set_base(BaseSpecYaml(*base));
    }
  }
  // Each grid value that names a file names its digest too, so that none inherits the base's.
  for (v1::GridAxis& axis : *spec->mutable_grid()) {
    for (v1::AxisValue& value : *axis.mutable_values()) {
      auto& set = *value.mutable_set();
      auto path = set.find(kPathKey);
      if (path == set.end() || set.count(kDigestKey) > 0) continue;
      const std::string file = ScalarValue(path->second);
      absl::StatusOr<std::optional<std::string>> digest = digests->Of(file);
      if (!digest.ok()) return digest.status();
      if (file.empty() || digest->has_value()) {
        set[kDigestKey] = file.empty() ? "" : **digest;  // "": the default, none.
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "grid axis '", axis.name(), "' value '", value.label(), "': ", kPathKey, " '", file,
          "' cannot be read on this host: give ", kDigestKey, " beside it (sha256sum FILE on the worker)"));
    }
  }
  for (const v1::RandomAxis& axis : spec->random()) {
    if (axis.key() == kPathKey) {
      return absl::InvalidArgumentError(absl::StrCat("random axis ", kPathKey, ": a drawn file carries no ",
                                                     kDigestKey, "; vary it on a grid axis instead"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckInitialWeightsDigests(const std::vector<ResolvedRun>& runs, WeightsDigests* digests) {
  for (const ResolvedRun& run : runs) {
    const ModelConfig& model = run.config.model;
    if (model.initial_checkpoint.empty()) continue;
    absl::StatusOr<std::optional<std::string>> digest = digests->Of(model.initial_checkpoint);
    if (!digest.ok()) return RunError(run.index, run.labels, digest.status());
    if (absl::Status st = RequireInitialWeightsDigest(run.config); !st.ok()) {
      return RunError(run.index, run.labels, st);
    }
    if (digest->has_value() && **digest != model.initial_checkpoint_sha256) {
      return RunError(run.index, run.labels,
                      absl::InvalidArgumentError(
                          absl::StrCat(kDigestKey, ": ", model.initial_checkpoint_sha256,
                                       " is not the SHA-256 of ", model.initial_checkpoint, " on this host, ",
                                       **digest, " (a changed file, or another file at this path)")));
    }
  }
  return absl::OkStatus();
}

absl::Status FillForkWeightsDigest(std::vector<std::string>* sets, WeightsDigests* digests) {
  const std::optional<std::string> file = LastSet(*sets, kPathKey);
  if (!file.has_value()) return absl::OkStatus();
  const std::optional<std::string> given = LastSet(*sets, kDigestKey);
  if (file->empty()) {  // No weights file: no digest either (validation refuses one alone).
    if (!given.has_value()) sets->push_back(absl::StrCat(kDigestKey, "="));
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<std::string>> digest = digests->Of(*file);
  if (!digest.ok()) return digest.status();
  if (digest->has_value() && !given.has_value()) {
    sets->push_back(absl::StrCat(kDigestKey, "=", **digest));
    return absl::OkStatus();
  }
  if (digest->has_value() && absl::AsciiStrToLower(*given) != **digest) {
    return absl::InvalidArgumentError(
        absl::StrCat("--set ", kDigestKey, "=", *given, " is not the SHA-256 of ", *file, " on this host, ",
                     **digest, " (a changed file, or another file at this path)"));
  }
  if (given.has_value()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--set ", kPathKey, "=", *file, ": nmctl cannot read ", *file,
      " on this host (a relative path is opened by the worker from the run directory): give --set ",
      kDigestKey, "=DIGEST beside it (sha256sum FILE on the worker), else the fork keeps its parent's ",
      kDigestKey, " and nmtrain refuses the new file"));
}

}  // namespace nmsparse::cli
