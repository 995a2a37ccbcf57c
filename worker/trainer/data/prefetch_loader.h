// Builds training batches ahead of the training loop, on background threads, so that a GPU never waits for
// the host to decode, augment or copy images. Position p of the run's sequence of batches is make(p); the
// positions are handed out in order to the threads, and at most `depth` batches are built or waiting ahead
// of the one the loop consumes. `make` must be a pure function of p (TrainLoader's batches are): which thread
// builds a batch, and how many threads there are, never changes it.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_PREFETCH_LOADER_H_
#define NMSPARSE_WORKER_TRAINER_DATA_PREFETCH_LOADER_H_

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "worker/trainer/data/batch_loader.h"

namespace nmsparse {

class PrefetchLoader {
 public:
  using MakeBatch = std::function<HostBatch(int64_t position)>;

  // Positions [first, end). `threads` 0 builds each batch in Next(), on the caller's thread.
  PrefetchLoader(MakeBatch make, int64_t first, int64_t end, int threads, int depth);
  ~PrefetchLoader();  // Stops and joins the threads (batches not consumed are dropped).
  PrefetchLoader(const PrefetchLoader&) = delete;
  PrefetchLoader& operator=(const PrefetchLoader&) = delete;

  // The batch of the next position, waiting for it if needed; rethrows what building it threw. Throws
  // std::out_of_range past the end.
  HostBatch Next();

 private:
  struct Slot {
    int64_t position = -1;  // The position whose batch is (being) built here.
    std::optional<HostBatch> batch;
    std::exception_ptr error;
  };
  void Work();

  const MakeBatch make_;
  const int64_t end_;
  std::mutex mu_;
  std::condition_variable ready_;  // A batch was finished.
  std::condition_variable space_;  // The consumer took a batch, or stop.
  std::vector<Slot> slots_;        // Position p lives in slots_[p % depth].
  int64_t next_claim_;             // The next position a thread takes.
  int64_t next_out_;               // The next position Next() returns.
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_PREFETCH_LOADER_H_
