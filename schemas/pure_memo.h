// A memo of a pure function, keyed on all of that function's own arguments (never on a list of what a caller
// is believed to read): the same arguments give the same answer, so a remembered answer is always right.
// Thread-safe (nmserver expands slices of a sweep on several threads); bounded, since the arguments come from
// users: past kMaxEntries it starts over.
#ifndef NMSPARSE_SCHEMAS_PURE_MEMO_H_
#define NMSPARSE_SCHEMAS_PURE_MEMO_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace nmsparse {

template <typename Value>
class PureMemo {
 public:
  static constexpr size_t kMaxEntries = 1024;

  // compute() when `key` (a serialization of every argument of the function compute() evaluates) is new.
  template <typename Compute>
  std::shared_ptr<const Value> Get(const std::string& key, Compute compute) {
    {
      absl::MutexLock lock(&mu_);
      auto it = values_.find(key);
      if (it != values_.end()) return it->second;
    }
    auto value = std::make_shared<const Value>(compute());
    absl::MutexLock lock(&mu_);
    if (values_.size() >= kMaxEntries) values_.clear();
    values_.emplace(key, value);
    return value;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Value>> values_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_PURE_MEMO_H_
