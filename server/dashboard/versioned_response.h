// Answers of the dashboard that carry a version (issue 29): an ETag, 304 Not Modified when the client
// already has that version (If-None-Match), and the body gzip'd by zlib at a fast level, once per cached
// body rather than per request. The content types name a charset, which keeps cpp-httplib from compressing
// the body again (it would brotli the whole of it, at its slowest level, on every request).
#ifndef NMSPARSE_SERVER_DASHBOARD_VERSIONED_RESPONSE_H_
#define NMSPARSE_SERVER_DASHBOARD_VERSIONED_RESPONSE_H_

#include <httplib.h>

#include <string>
#include <string_view>

namespace nmsparse::server {

struct CompressedBody {
  std::string plain;
  std::string gzip;  // Empty when zlib failed: the plain body is sent.
};

CompressedBody Compress(std::string plain);

// `etag` without quotes; `content_type` such as "application/json; charset=utf-8".
void SendVersioned(const httplib::Request& req, httplib::Response& res, const std::string& etag,
                   const CompressedBody& body, const std::string& content_type);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_DASHBOARD_VERSIONED_RESPONSE_H_
