#include "worker/trainer/checkpoint/checkpoint_digest.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "common/checked_file.h"
#include "contract/run_directory.h"
#include "gtest/gtest.h"

namespace nmsparse {
namespace {

std::string Hash(const std::string& bytes) {
  Sha256 h;
  h.Update(bytes.data(), bytes.size());
  return h.HexDigest();
}

// FIPS 180-4's examples (one and two blocks), the empty string, and a million 'a's fed in uneven pieces
// across block boundaries.
TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 h;
  const std::string piece(997, 'a');
  size_t fed = 0;
  while (fed < 1000000) {
    const size_t n = std::min(piece.size() - (fed % 7), 1000000 - fed);
    h.Update(piece.data(), n);
    fed += n;
  }
  EXPECT_EQ(h.HexDigest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

std::string TempDir() {
  std::string dir =
      std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/digest_XXXXXX";
  return mkdtemp(dir.data());
}

// A directory without a record is used unverified; a listed file is intact; a flipped byte is damaged and
// named; the record keeps the three latest digests.
TEST(CheckpointDigestTest, RecordAndVerify) {
  const std::string dir = TempDir();
  const std::string path = dir + "/" + contract::kCheckpointFiles[0];
  ASSERT_TRUE(WriteFileAtomically(path, "weights one").ok());
  bool unverified = false;
  ASSERT_TRUE(VerifyCheckpointFile(dir, path, &unverified).ok());
  EXPECT_TRUE(unverified);

  ASSERT_TRUE(RecordDigest(dir, Hash("weights one")).ok());
  ASSERT_TRUE(VerifyCheckpointFile(dir, path, &unverified).ok());
  EXPECT_FALSE(unverified);

  ASSERT_TRUE(WriteFileAtomically(path, "weights onE").ok());
  const absl::Status damaged = VerifyCheckpointFile(dir, path, &unverified);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.message(), "checkpoint " + path + " is damaged: its SHA-256 " + Hash("weights onE") +
                                   " is not one recorded in " + dir + "/" + contract::kCheckpointDigestFile);

  for (const char* next : {"two", "three", "four"}) ASSERT_TRUE(RecordDigest(dir, Hash(next)).ok());
  EXPECT_EQ(RecordedDigests(dir), (std::vector<std::string>{Hash("four"), Hash("three"), Hash("two")}));
}

TEST(CheckpointDigestTest, FileSha256NamesMissingFile) {
  const absl::StatusOr<std::string> digest = FileSha256("/nonexistent/checkpoint.pt");
  ASSERT_FALSE(digest.ok());
  EXPECT_EQ(digest.status().message(), "no such file or directory: /nonexistent/checkpoint.pt");
}

}  // namespace
}  // namespace nmsparse
