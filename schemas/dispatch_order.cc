#include "schemas/dispatch_order.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "schemas/content_hash.h"

namespace nmsparse {

std::vector<size_t> DispatchOrder(uint64_t seed, const std::vector<std::string>& content_hashes) {
  // Keyed by content, not by grid position: a position-keyed shuffle of an lr-ascending grid and of the
  // same grid descending would still give different orders of the same runs.
  std::vector<std::string> keys;
  keys.reserve(content_hashes.size());
  for (const std::string& hash : content_hashes) keys.push_back(Sha256Hex(absl::StrCat(seed, ":", hash)));
  std::vector<size_t> order(content_hashes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&keys](size_t a, size_t b) { return keys[a] < keys[b]; });
  return order;
}

}  // namespace nmsparse
