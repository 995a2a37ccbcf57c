#include "server/dashboard/versioned_response.h"

#include <zlib.h>

#include "absl/strings/str_cat.h"

namespace nmsparse::server {
namespace {

constexpr int kGzipLevel = 4;
constexpr int kGzipWindowBits = 15 + 16;  // 16: a gzip header, which every browser accepts.

bool AcceptsGzip(const httplib::Request& req) {
  return req.get_header_value("Accept-Encoding").find("gzip") != std::string::npos;
}

}  // namespace

CompressedBody Compress(std::string plain) {
  CompressedBody out;
  out.plain = std::move(plain);
  z_stream z{};
  if (deflateInit2(&z, kGzipLevel, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK) return out;
  out.gzip.resize(deflateBound(&z, out.plain.size()));
  z.next_in = reinterpret_cast<Bytef*>(out.plain.data());
  z.avail_in = static_cast<uInt>(out.plain.size());
  z.next_out = reinterpret_cast<Bytef*>(out.gzip.data());
  z.avail_out = static_cast<uInt>(out.gzip.size());
  const bool done = deflate(&z, Z_FINISH) == Z_STREAM_END;
  out.gzip.resize(done ? z.total_out : 0);
  deflateEnd(&z);
  return out;
}

void SendVersioned(const httplib::Request& req, httplib::Response& res, const std::string& etag,
                   const CompressedBody& body, const std::string& content_type) {
  const std::string quoted = absl::StrCat("\"", etag, "\"");
  res.set_header("ETag", quoted);
  res.set_header("Cache-Control", "no-cache");  // Revalidate each time: a 304 costs a compare.
  res.set_header("Vary", "Accept-Encoding");
  if (req.get_header_value("If-None-Match") == quoted) {
    res.status = 304;
    return;
  }
  if (!body.gzip.empty() && AcceptsGzip(req)) {
    res.set_header("Content-Encoding", "gzip");
    res.set_content(body.gzip, content_type);
    return;
  }
  res.set_content(body.plain, content_type);
}

}  // namespace nmsparse::server
