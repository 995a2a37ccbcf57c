// SHA-256 of data that arrives in pieces (a file sent in chunks), in lowercase hex: what the sender of an
// exported model computes as it reads and the receiver as it writes (nmctl export-model).
#ifndef NMSPARSE_COMMON_SHA256_STREAM_H_
#define NMSPARSE_COMMON_SHA256_STREAM_H_

#include <cstddef>
#include <string>

struct evp_md_ctx_st;

namespace nmsparse {

class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(const void* data, size_t size);
  // The digest of everything updated so far; the stream starts again empty.
  std::string HexDigest();

 private:
  evp_md_ctx_st* ctx_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_SHA256_STREAM_H_
