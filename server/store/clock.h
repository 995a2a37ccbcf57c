// Wall-clock milliseconds since the Unix epoch: what the database stores and the API reports.
#ifndef NMSPARSE_SERVER_STORE_CLOCK_H_
#define NMSPARSE_SERVER_STORE_CLOCK_H_

#include <cstdint>

#include "absl/time/clock.h"

namespace nmsparse::server {

inline int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_CLOCK_H_
