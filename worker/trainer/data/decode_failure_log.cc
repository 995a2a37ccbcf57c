#include "worker/trainer/data/decode_failure_log.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace nmsparse {

void DecodeFailureLog::Record(int64_t epoch, const std::string& where, const std::string& message) {
  absl::MutexLock lock(&mu_);
  DecodeFailure& failure = epochs_[epoch][where];
  if (failure.count++ == 0) {
    failure.where = where;
    failure.message = message;
  }
}

int64_t DecodeFailureLog::Count(int64_t epoch) const {
  absl::MutexLock lock(&mu_);
  int64_t count = 0;
  if (auto it = epochs_.find(epoch); it != epochs_.end()) {
    for (const auto& [where, failure] : it->second) count += failure.count;
  }
  return count;
}

std::vector<DecodeFailure> DecodeFailureLog::Failures(int64_t epoch) const {
  std::vector<DecodeFailure> failures;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = epochs_.find(epoch); it != epochs_.end()) {
      for (const auto& [where, failure] : it->second) failures.push_back(failure);
    }
  }
  // Stable on the name order of the map: ties stay sorted by name.
  std::stable_sort(failures.begin(), failures.end(),
                   [](const DecodeFailure& a, const DecodeFailure& b) { return a.count > b.count; });
  return failures;
}

absl::Status DecodeFailureLog::CheckThreshold(int64_t epoch, int64_t epoch_images,
                                              double max_fraction) const {
  const int64_t count = Count(epoch);
  if (!OverDecodeFailureThreshold(count, epoch_images, max_fraction)) return absl::OkStatus();
  return DecodeFailureThresholdError("images", epoch, count, epoch_images, Failures(epoch), max_fraction);
}

bool OverDecodeFailureThreshold(int64_t count, int64_t epoch_images, double max_fraction) {
  return static_cast<double>(count) > max_fraction * static_cast<double>(epoch_images);
}

absl::Status DecodeFailureThresholdError(const std::string& what, int64_t epoch, int64_t count,
                                         int64_t epoch_images, const std::vector<DecodeFailure>& worst,
                                         double max_fraction) {
  const double allowed = max_fraction * static_cast<double>(epoch_images);
  std::string message = absl::StrCat(count, " ", what, " of ", epoch_images, " in epoch ", epoch,
                                     " could not be decoded, over the limit of ", max_fraction * 100, "% (",
                                     static_cast<int64_t>(std::floor(allowed)), " images); worst:");
  for (size_t i = 0; i < worst.size() && i < kWorstFilesNamed; ++i) {
    absl::StrAppend(&message, "\n  ", worst[i].where, " (", worst[i].count, "x): ", worst[i].message);
  }
  return absl::DataLossError(message);
}

absl::StatusOr<DecodedSample> DecodeOrReplace(
    const EncodedDataset& data, int64_t index, int64_t epoch,
    const std::function<absl::StatusOr<Image>(const ImageSource&)>& decode, DecodeFailureLog* log) {
  absl::Status last;
  const int64_t tries = std::min<int64_t>(kMaxConsecutiveDecodeFailures, data.size());
  for (int64_t attempt = 0; attempt < tries; ++attempt) {
    const int64_t i = (index + attempt) % data.size();
    auto sample = data.Open(i);
    absl::StatusOr<Image> image =
        sample.ok() ? decode(*sample->image) : absl::StatusOr<Image>(sample.status());
    if (image.ok()) return DecodedSample{*std::move(image), sample->label, i};
    last = image.status();
    if (!absl::IsDataLoss(last) && !absl::IsNotFound(last)) return last;
    log->Record(epoch, data.Describe(i), std::string(last.message()));
  }
  return absl::DataLossError(absl::StrCat("no decodable image in the ", tries, " from image ", index, " (",
                                          data.Describe(index), "); last: ", last.message()));
}

}  // namespace nmsparse
