// The integrity record of a run's checkpoints: the SHA-256 of every checkpoint file nmtrain wrote, in
// <out>/checkpoint.sha256 (contract/run_directory.h), so that a file damaged behind the trainer's back (bit
// flips, a truncation) is refused before it is used rather than trained on. LibTorch's archive reader does
// not check its zip CRCs, so a flipped weight would load.
//
// The record lists digests, not file names: the latest checkpoint's, then the two before it. SaveCheckpoint
// writes the new list (atomically) before it renames checkpoint.pt to checkpoint.prev.pt and the new file to
// checkpoint.pt, so a SIGKILL between any two of these steps leaves every checkpoint file present listed.
// Plain C++ (no LibTorch): the SHA-256 is our own (FIPS 180-4), since the trainer builds on GPU nodes where
// only LibTorch is present.
#ifndef NMSPARSE_WORKER_TRAINER_CHECKPOINT_CHECKPOINT_DIGEST_H_
#define NMSPARSE_WORKER_TRAINER_CHECKPOINT_CHECKPOINT_DIGEST_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nmsparse {

// SHA-256 over bytes fed in any number of pieces.
class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  std::string HexDigest();  // Ends the hash: 64 lower-case hex digits.

 private:
  void Block(const uint8_t* block);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t length_ = 0;
};

// The hex SHA-256 of a file's bytes; an error names the file.
absl::StatusOr<std::string> FileSha256(const std::string& path);

// The digests recorded in `dir` (latest first); empty when the record is absent (checkpoints written before
// it was kept, or no checkpoint yet).
std::vector<std::string> RecordedDigests(const std::string& dir);

// Records `latest` first, then the previously recorded digests, three in all.
absl::Status RecordDigest(const std::string& dir, const std::string& latest);

// Whether the checkpoint file `path` (in `dir`) may be used: OK when its digest is recorded, or when `dir`
// has no record at all (then `*unverified` is set); DATA_LOSS naming the file and both digests otherwise.
absl::Status VerifyCheckpointFile(const std::string& dir, const std::string& path, bool* unverified);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_CHECKPOINT_CHECKPOINT_DIGEST_H_
