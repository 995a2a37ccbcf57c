#include "server/background_loop.h"

namespace nmsparse::server {

void BackgroundLoop::Start(absl::Duration period, std::function<void()> body) {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this, period, body = std::move(body)] { Run(period, body); });
}

void BackgroundLoop::Wake() {
  absl::MutexLock lock(&mu_);
  woken_ = true;
}

void BackgroundLoop::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void BackgroundLoop::Run(absl::Duration period, const std::function<void()>& body) {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return woken_ || stop_; };
      mu_.AwaitWithTimeout(absl::Condition(&ready), period);
      if (stop_) return;
      woken_ = false;
    }
    body();
  }
}

}  // namespace nmsparse::server
