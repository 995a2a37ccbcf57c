// The one way the training loop reads device values on the host. A read (item(), a copy to the CPU) makes
// the host wait until the device has caught up, which empties the GPU's queue of work; the loop therefore
// reads only at its sync points (every schedule.log_every_steps steps, and at epoch ends), and every read
// goes through here so that a test can count them (trainer_test: none between two sync points).
#ifndef NMSPARSE_WORKER_TRAINER_DEVICE_HOST_READS_H_
#define NMSPARSE_WORKER_TRAINER_DEVICE_HOST_READS_H_

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace nmsparse {

// The values of a small tensor (any device, any floating or integer dtype), as doubles, in one read.
std::vector<double> ReadToHost(const torch::Tensor& values);

// How many reads this process has made so far.
int64_t HostReadCount();

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DEVICE_HOST_READS_H_
