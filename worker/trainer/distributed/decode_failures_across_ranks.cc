#include "worker/trainer/distributed/decode_failures_across_ranks.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace nmsparse {
namespace {

// One failure per line: count, file and message, tab-separated (tabs and newlines in them become spaces).
std::string Serialize(const std::vector<DecodeFailure>& failures) {
  std::string text;
  for (size_t i = 0; i < failures.size() && i < kWorstFilesNamed; ++i) {
    const auto flat = [](const std::string& s) { return absl::StrReplaceAll(s, {{"\t", " "}, {"\n", " "}}); };
    absl::StrAppend(&text, failures[i].count, "\t", flat(failures[i].where), "\t", flat(failures[i].message),
                    "\n");
  }
  return text;
}

void Parse(const std::string& text, std::vector<DecodeFailure>& into) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits('\t', 2));
    DecodeFailure failure;
    if (fields.size() != 3 || !absl::SimpleAtoi(fields[0], &failure.count)) continue;
    failure.where = fields[1];
    failure.message = fields[2];
    into.push_back(std::move(failure));
  }
}

// Worst first, then by name.
void SortWorstFirst(std::vector<DecodeFailure>& failures) {
  std::sort(failures.begin(), failures.end(), [](const DecodeFailure& a, const DecodeFailure& b) {
    return a.count != b.count ? a.count > b.count : a.where < b.where;
  });
}

}  // namespace

void SumDecodeFailures(std::vector<SplitDecodeFailures>& splits, Distributed& dist) {
  std::vector<double> counts;
  for (const auto& split : splits) counts.push_back(static_cast<double>(split.count));
  counts = dist.SumAcrossRanks(counts);  // Exact: counts stay far below 2^53.
  for (size_t i = 0; i < splits.size(); ++i) splits[i].count = static_cast<int64_t>(counts[i]);
}

absl::Status CheckDecodeFailures(const std::vector<SplitDecodeFailures>& splits, Distributed& dist,
                                 double max_fraction) {
  for (const auto& split : splits) {
    if (!OverDecodeFailureThreshold(split.count, split.images, max_fraction)) continue;
    const auto worst = WorstFailuresOfAllRanks(split.failed, dist);
    return DecodeFailureThresholdError(split.what, split.epoch, split.count, split.images, worst,
                                       max_fraction);
  }
  return absl::OkStatus();
}

std::vector<DecodeFailure> WorstFailuresOfAllRanks(std::vector<DecodeFailure> failures, Distributed& dist) {
  SortWorstFirst(failures);
  const std::string mine = Serialize(failures);
  // AllGatherBytes wants the same size on every rank: the lengths first, then every text padded to the
  // longest.
  std::vector<double> lengths(dist.world_size(), 0.0);
  lengths[dist.rank()] = static_cast<double>(mine.size());
  lengths = dist.SumAcrossRanks(lengths);
  const int64_t longest = static_cast<int64_t>(*std::max_element(lengths.begin(), lengths.end()));
  auto bytes = torch::zeros({std::max<int64_t>(longest, 1)}, torch::kUInt8);
  std::memcpy(bytes.data_ptr<uint8_t>(), mine.data(), mine.size());
  const torch::Tensor table = dist.AllGatherBytes(bytes).contiguous();
  std::vector<DecodeFailure> all;
  for (int r = 0; r < dist.world_size(); ++r) {
    const auto* row = table[r].data_ptr<uint8_t>();
    Parse(std::string(reinterpret_cast<const char*>(row), static_cast<size_t>(lengths[r])), all);
  }
  SortWorstFirst(all);
  if (all.size() > static_cast<size_t>(kWorstFilesNamed)) all.resize(kWorstFilesNamed);
  return all;
}

}  // namespace nmsparse
