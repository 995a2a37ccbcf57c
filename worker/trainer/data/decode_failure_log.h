// Bad data never stops a run silently: images that cannot be opened or decoded are replaced by the next
// index (wrapping), each failure is logged per epoch, and past a threshold (by default 0.1% of an epoch's
// images) the run fails naming the worst files. The loader records; the trainer reports and checks.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_DECODE_FAILURE_LOG_H_
#define NMSPARSE_WORKER_TRAINER_DATA_DECODE_FAILURE_LOG_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "worker/trainer/data/encoded_dataset.h"

namespace nmsparse {

// The share of an epoch's images that may fail to decode before the run fails.
constexpr double kDefaultMaxDecodeFailureFraction = 0.001;
// Consecutive images tried for one index before the loader gives up (a dataset that is mostly broken).
constexpr int kMaxConsecutiveDecodeFailures = 64;
// Files named in a threshold error.
constexpr int kWorstFilesNamed = 5;

struct DecodeFailure {
  std::string where;    // The dataset's Describe(index): the file, or the shard and record.
  std::string message;  // The first failure's message.
  int64_t count = 0;    // Failures of this image in the epoch.
};

class DecodeFailureLog {
 public:
  // Thread-safe.
  void Record(int64_t epoch, const std::string& where, const std::string& message);
  // Failures of `epoch` in all.
  int64_t Count(int64_t epoch) const;
  // The failed images of `epoch`, worst first (most failures, then by name).
  std::vector<DecodeFailure> Failures(int64_t epoch) const;
  // OK while `epoch`'s failures are at most `max_fraction` of `epoch_images`; otherwise
  // DecodeFailureThresholdError.
  absl::Status CheckThreshold(int64_t epoch, int64_t epoch_images,
                              double max_fraction = kDefaultMaxDecodeFailureFraction) const;

 private:
  mutable absl::Mutex mu_;
  std::map<int64_t, std::map<std::string, DecodeFailure>> epochs_ ABSL_GUARDED_BY(mu_);
};

// Whether `count` failures in `epoch_images` images are past `max_fraction` of them.
bool OverDecodeFailureThreshold(int64_t count, int64_t epoch_images,
                                double max_fraction = kDefaultMaxDecodeFailureFraction);

// DataLoss: `count` `what` ("images", "training images") of `epoch_images` in `epoch` could not be decoded,
// the threshold, and the first kWorstFilesNamed of `worst` (worst first) with their messages.
absl::Status DecodeFailureThresholdError(const std::string& what, int64_t epoch, int64_t count,
                                         int64_t epoch_images, const std::vector<DecodeFailure>& worst,
                                         double max_fraction = kDefaultMaxDecodeFailureFraction);

// What a replaced read gave: the image decoded by `decode`, its label and the index it came from.
struct DecodedSample {
  Image image;
  int64_t label = 0;
  int64_t index = 0;
};

// Opens image `index` of `data` and runs `decode` (a transform, or ImageSource::Decode) on it. When opening
// or decoding fails with DataLoss or NotFound, the failure is recorded in `log` for `epoch` and the next
// index is tried (wrapping at the end). Other errors, and kMaxConsecutiveDecodeFailures failures in a row,
// are returned.
absl::StatusOr<DecodedSample> DecodeOrReplace(
    const EncodedDataset& data, int64_t index, int64_t epoch,
    const std::function<absl::StatusOr<Image>(const ImageSource&)>& decode, DecodeFailureLog* log);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_DECODE_FAILURE_LOG_H_
