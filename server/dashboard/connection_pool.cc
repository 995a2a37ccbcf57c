#include "server/dashboard/connection_pool.h"

#include <utility>

namespace nmsparse::server {

void ConnectionPool::enqueue(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  tasks_.push_back(std::move(task));
  // A waiting thread takes it (the condition below wakes it); otherwise a new one, within the cap.
  if (idle_ < static_cast<int>(tasks_.size()) && static_cast<int>(threads_.size()) < max_threads_) {
    threads_.emplace_back([this] { Work(); });
  }
}

void ConnectionPool::shutdown() {
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

int ConnectionPool::threads() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(threads_.size());
}

bool ConnectionPool::HasWork() const { return !tasks_.empty() || stopping_; }

void ConnectionPool::Work() {
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      ++idle_;
      mu_.Await(absl::Condition(this, &ConnectionPool::HasWork));
      --idle_;
      if (tasks_.empty()) return;  // Stopping, and nothing left to run.
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace nmsparse::server
