// Wakes watchers (WatchRun) when anything about runs was written, so a live stream does not have to wait for
// its next poll. A version counter avoids missed wake-ups; waiters still re-read the database themselves.
#ifndef NMSPARSE_SERVER_CHANGE_SIGNAL_H_
#define NMSPARSE_SERVER_CHANGE_SIGNAL_H_

#include <cstdint>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nmsparse::server {

class ChangeSignal {
 public:
  void Notify() {
    absl::MutexLock lock(&mu_);
    ++version_;
  }
  uint64_t version() {
    absl::MutexLock lock(&mu_);
    return version_;
  }
  // Waits until the version differs from `seen` or `timeout` passes, or Close() was called; returns the
  // version.
  uint64_t WaitChange(uint64_t seen, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto changed = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return version_ != seen || closed_; };
    mu_.AwaitWithTimeout(absl::Condition(&changed), timeout);
    return version_;
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  bool closed() {
    absl::MutexLock lock(&mu_);
    return closed_;
  }

 private:
  absl::Mutex mu_;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_CHANGE_SIGNAL_H_
