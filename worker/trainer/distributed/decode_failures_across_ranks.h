// Images that could not be decoded, decided on by all ranks together: each rank's loader records only the
// images of its own shard (decode_failure_log.h), so at the end of an epoch the counts are summed over ranks
// and every rank compares the same sums with the threshold. Past it, the worst files of all ranks are
// gathered and every rank fails with the same message, instead of one rank failing while the others wait
// for the collective timeout. One collective per epoch (two when the run fails), none per step.
#ifndef NMSPARSE_WORKER_TRAINER_DISTRIBUTED_DECODE_FAILURES_ACROSS_RANKS_H_
#define NMSPARSE_WORKER_TRAINER_DISTRIBUTED_DECODE_FAILURES_ACROSS_RANKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "worker/trainer/data/decode_failure_log.h"
#include "worker/trainer/distributed/distributed.h"

namespace nmsparse {

// One split's failures in one epoch.
struct SplitDecodeFailures {
  std::string what;                   // "training images", "evaluation images": named in the error.
  int64_t epoch = 0;                  // Named in the error.
  int64_t count = 0;                  // Before SumDecodeFailures: this rank's; after: all ranks'.
  int64_t images = 0;                 // The split's images read in the epoch by all ranks.
  std::vector<DecodeFailure> failed;  // This rank's failed images (DecodeFailureLog::Failures).
};

// Replaces each split's count by its sum over ranks (one collective: every rank calls it with the splits in
// the same order).
void SumDecodeFailures(std::vector<SplitDecodeFailures>& splits, Distributed& dist);

// After SumDecodeFailures: OK while every split is within `max_fraction` of its images; otherwise the same
// DataLoss on every rank for the first split past it, naming the worst files of all ranks (a collective,
// entered by every rank alike since all decide on the same sums).
absl::Status CheckDecodeFailures(const std::vector<SplitDecodeFailures>& splits, Distributed& dist,
                                 double max_fraction = kDefaultMaxDecodeFailureFraction);

// The worst of `failures` (each rank's own) over all ranks: worst first, then by name, at most
// kWorstFilesNamed. A collective.
std::vector<DecodeFailure> WorstFailuresOfAllRanks(std::vector<DecodeFailure> failures, Distributed& dist);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DISTRIBUTED_DECODE_FAILURES_ACROSS_RANKS_H_
