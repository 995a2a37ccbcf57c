#include "worker/trainer/checkpoint/checkpoint_digest.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/checked_file.h"
#include "contract/run_directory.h"

namespace nmsparse {
namespace {

constexpr std::array<uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr size_t kRecordedDigests = 3;

uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

std::string RecordPath(const std::string& dir) { return dir + "/" + contract::kCheckpointDigestFile; }

}  // namespace

Sha256::Sha256()
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::Block(const uint8_t* block) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
           (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t t1 =
        h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::Update(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  length_ += size;
  while (size > 0) {
    if (buffered_ == 0 && size >= 64) {
      Block(p);
      p += 64;
      size -= 64;
      continue;
    }
    const size_t n = std::min(size, 64 - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, n);
    buffered_ += n;
    p += n;
    size -= n;
    if (buffered_ == 64) {
      Block(buffer_.data());
      buffered_ = 0;
    }
  }
}

std::string Sha256::HexDigest() {
  const uint64_t bits = length_ * 8;
  const uint8_t pad = 0x80;
  Update(&pad, 1);
  const uint8_t zero = 0;
  while (buffered_ != 56) Update(&zero, 1);
  uint8_t tail[8];
  for (int i = 0; i < 8; ++i) tail[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  Update(tail, 8);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint32_t word : h_) {
    for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(word >> shift) & 0xf];
  }
  return out;
}

absl::StatusOr<std::string> FileSha256(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileError(errno, path);
  Sha256 hash;
  std::vector<char> chunk(1 << 20);
  for (;;) {
    const ssize_t n = read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return FileError(error, path);
    }
    if (n == 0) break;
    hash.Update(chunk.data(), static_cast<size_t>(n));
  }
  close(fd);
  return hash.HexDigest();
}

std::vector<std::string> RecordedDigests(const std::string& dir) {
  std::ifstream in(RecordPath(dir));
  std::vector<std::string> digests;
  std::string line;
  while (std::getline(in, line)) {
    const std::string digest(absl::StripAsciiWhitespace(line));
    if (!digest.empty()) digests.push_back(digest);
  }
  return digests;
}

absl::Status RecordDigest(const std::string& dir, const std::string& latest) {
  std::vector<std::string> digests = {latest};
  for (const std::string& d : RecordedDigests(dir)) {
    if (digests.size() < kRecordedDigests && d != latest) digests.push_back(d);
  }
  return WriteFileAtomically(RecordPath(dir), absl::StrJoin(digests, "\n") + "\n");
}

absl::Status VerifyCheckpointFile(const std::string& dir, const std::string& path, bool* unverified) {
  const std::vector<std::string> recorded = RecordedDigests(dir);
  *unverified = recorded.empty();
  if (recorded.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> digest = FileSha256(path);
  if (!digest.ok()) return digest.status();
  if (std::find(recorded.begin(), recorded.end(), *digest) != recorded.end()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("checkpoint ", path, " is damaged: its SHA-256 ", *digest,
                                          " is not one recorded in ", RecordPath(dir)));
}

}  // namespace nmsparse
