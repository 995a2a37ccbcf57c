// nmctl's side of model.initial_checkpoint_sha256 (schemas/initial_weights_digest.h, docs/interop.md): the
// coordinator cannot read a worker's weights file, so nmctl puts the file's SHA-256 into the spec where it
// can read the file, and checks a digest given by hand there. A file nmctl cannot read (a relative path,
// which the worker opens from the run directory, or one absent from this host) needs its digest given.
#ifndef NMSPARSE_CLI_INITIAL_WEIGHTS_DIGESTS_H_
#define NMSPARSE_CLI_INITIAL_WEIGHTS_DIGESTS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "schemas/sweep.h"

namespace nmsparse::cli {

// The SHA-256 of the weights files of one spec's runs, each file hashed once.
class WeightsDigests {
 public:
  // The SHA-256 of the file model.initial_checkpoint `path` names (a folder's model.safetensors), read in
  // chunks; nullopt where this host cannot see it (a relative or absent path). An error names the file.
  absl::StatusOr<std::optional<std::string>> Of(const std::string& path);

 private:
  std::map<std::string, std::optional<std::string>> known_;
};

// Fills model.initial_checkpoint_sha256 into the base and into every grid value that sets
// model.initial_checkpoint without it, where the file can be read here. A grid value whose file cannot be
// read here, and a random axis over model.initial_checkpoint (its draws carry no digest), are errors naming
// the axis and the key.
absl::Status FillInitialWeightsDigests(v1::SweepSpec* spec, WeightsDigests* digests);

// Every run with initial weights has their digest, and it is the file's where the file can be read here;
// errors name the run, the file and both digests.
absl::Status CheckInitialWeightsDigests(const std::vector<ResolvedRun>& runs, WeightsDigests* digests);

// nmctl fork's "key.path=value" overrides: where they set model.initial_checkpoint without its digest, adds
// the digest of the file (read here), or clears it with the file; checks a digest given beside a file read
// here. A file out of nmctl's reach without a digest is an error naming both keys: else the fork would keep
// its parent's digest, and nmtrain would refuse the new file at start.
absl::Status FillForkWeightsDigest(std::vector<std::string>* sets, WeightsDigests* digests);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_INITIAL_WEIGHTS_DIGESTS_H_
