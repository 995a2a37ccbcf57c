#include "server/scheduling/assignment_hub.h"

namespace nmsparse::server {

uint64_t AssignmentHub::Connect(int64_t worker_id) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return 0;
  Channel& c = channels_[worker_id];
  c.token = next_token_++;
  c.queue.clear();
  cv_.SignalAll();  // Wakes an older stream of this worker so it notices it was replaced.
  return c.token;
}

void AssignmentHub::Disconnect(int64_t worker_id, uint64_t token) {
  absl::MutexLock lock(&mu_);
  auto it = channels_.find(worker_id);
  if (it != channels_.end() && it->second.token == token) channels_.erase(it);
}

bool AssignmentHub::IsConnected(int64_t worker_id) const {
  absl::MutexLock lock(&mu_);
  return channels_.count(worker_id) > 0;
}

bool AssignmentHub::Push(int64_t worker_id, const v1::Assignment& a) {
  absl::MutexLock lock(&mu_);
  auto it = channels_.find(worker_id);
  if (it == channels_.end()) return false;
  it->second.queue.push_back(a);
  cv_.SignalAll();
  return true;
}

bool AssignmentHub::Next(int64_t worker_id, uint64_t token, absl::Duration timeout,
                         std::vector<v1::Assignment>* out) {
  absl::MutexLock lock(&mu_);
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    auto it = channels_.find(worker_id);
    if (shutdown_ || it == channels_.end() || it->second.token != token) return false;
    if (!it->second.queue.empty()) {
      out->insert(out->end(), it->second.queue.begin(), it->second.queue.end());
      it->second.queue.clear();
      return true;
    }
    if (cv_.WaitWithDeadline(&mu_, deadline)) return true;
  }
}

void AssignmentHub::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
  channels_.clear();
  cv_.SignalAll();
}

}  // namespace nmsparse::server
