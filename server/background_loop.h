// A background thread that runs a body periodically and whenever woken (wake-ups coalesce), until stopped.
// The scheduler's passes and the lease checks run on one each.
#ifndef NMSPARSE_SERVER_BACKGROUND_LOOP_H_
#define NMSPARSE_SERVER_BACKGROUND_LOOP_H_

#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nmsparse::server {

class BackgroundLoop {
 public:
  ~BackgroundLoop() { Stop(); }

  // Starts the thread (once): `body` runs every `period`, and soon after each Wake().
  void Start(absl::Duration period, std::function<void()> body);
  void Wake();
  // Lets a running body finish, then joins the thread.
  void Stop();

 private:
  void Run(absl::Duration period, const std::function<void()>& body);
  absl::Mutex mu_;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_BACKGROUND_LOOP_H_
