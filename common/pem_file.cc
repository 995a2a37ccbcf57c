#include "common/pem_file.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace nmsparse {
namespace {

// Whether `text` holds at least one well-formed PEM block (OpenSSL's reader: BEGIN/END lines around base64).
// gRPC would otherwise take any bytes and fail only when it dials, with "empty address list".
bool HasPemBlock(const std::string& text) {
  BIO* bio = BIO_new_mem_buf(text.data(), static_cast<int>(text.size()));
  if (bio == nullptr) return false;
  char* name = nullptr;
  char* header = nullptr;
  unsigned char* data = nullptr;
  long length = 0;
  const bool found = PEM_read_bio(bio, &name, &header, &data, &length) == 1;
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  BIO_free(bio);
  ERR_clear_error();
  return found;
}

}  // namespace

absl::StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& source) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty())
    return absl::InvalidArgumentError(absl::StrCat(source, ": cannot read ", path));
  if (!HasPemBlock(text.str())) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", path, " is not a PEM file (no -----BEGIN ...----- block)"));
  }
  return text.str();
}

}  // namespace nmsparse
