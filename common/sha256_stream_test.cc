#include "common/sha256_stream.h"

#include <string>

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

// FIPS 180-2's examples, whole and in pieces of every split point.
TEST(Sha256StreamTest, GivesTheStandardsDigestWholeAndInPieces) {
  const std::string abc_digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  Sha256Stream sha;
  EXPECT_EQ(sha.HexDigest(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (size_t split = 0; split <= text.size(); ++split) {
    sha.Update(text.data(), split);
    sha.Update(text.data() + split, text.size() - split);
    EXPECT_EQ(sha.HexDigest(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") << split;
  }
  sha.Update("abc", 3);
  EXPECT_EQ(sha.HexDigest(), abc_digest);
}

}  // namespace
}  // namespace nmsparse
