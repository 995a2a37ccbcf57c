#include "schemas/structure_decay.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nmsparse {
namespace {

// floor(log2(v)) for v >= 1.
int FloorLog2(int v) {
  int k = 0;
  while (v >= 2) {
    v /= 2;
    ++k;
  }
  return k;
}

}  // namespace

int DenseEpochs(const SparsityConfig& config, int total_epochs) {
  return static_cast<int>(config.dense_fraction * total_epochs);
}

int FineTuneEpochs(const SparsityConfig& config, int total_epochs) {
  return static_cast<int>(config.fine_tune_fraction * total_epochs);
}

std::vector<NM> StructureDecayTable(StructureDecayType type, NM target, int start_multiple) {
  std::vector<NM> table;
  if (type == StructureDecayType::kSparsify) {
    // Largest k with N * 2^k <= M, i.e. floor(log2(M/N)) without floating point.
    int k = 0;
    while (static_cast<int64_t>(target.n) << (k + 1) <= target.m) ++k;
    const int stages = k + 1;
    for (int i = 0; i < stages; ++i) {
      table.push_back(i == 0 ? NM{target.m - 1, target.m} : NM{target.m >> i, target.m});
    }
  } else {
    const int stages = FloorLog2(start_multiple) + 1;
    for (int i = 0; i < stages; ++i) {
      const int scale = start_multiple >> i;
      table.push_back(type == StructureDecayType::kFine ? NM{target.n * scale, target.m * scale}
                                                        : NM{target.n, target.m * scale});
    }
  }
  table.back() = target;
  return table;
}

std::vector<std::pair<int, NM>> StructureDecayStages(const SparsityConfig& config, int total_epochs,
                                                     NM target) {
  const int d = DenseEpochs(config, total_epochs);
  if (!config.structure_decay_flag) return {{d, target}};
  const int f = FineTuneEpochs(config, total_epochs);
  const std::vector<NM> table =
      StructureDecayTable(config.structure_decay_type, target, config.structure_decay_start_multiple);
  const int k = static_cast<int>(table.size());
  const int64_t span = total_epochs - d - f;
  std::vector<std::pair<int, NM>> stages;
  for (int i = 0; i < k; ++i) {
    const int start = d + static_cast<int>(i * span / k);
    if (!stages.empty() && stages.back().first == start) {
      stages.back().second = table[i];  // Coinciding starts: the later stage wins.
    } else {
      stages.emplace_back(start, table[i]);
    }
  }
  return stages;
}

std::vector<std::pair<int, NM>> StructureDecayStages(const SparsityConfig& config, int total_epochs) {
  return StructureDecayStages(config, total_epochs, config.nm);
}

std::string SkippedStagesWarning(const SparsityConfig& config, int total_epochs) {
  if (!config.structure_decay_flag || !FollowsStructureDecay(config.sparsity_type)) return "";
  const std::vector<NM> table =
      StructureDecayTable(config.structure_decay_type, config.nm, config.structure_decay_start_multiple);
  const auto stages = StructureDecayStages(config, total_epochs, config.nm);
  if (stages.size() >= table.size()) return "";
  std::vector<std::string> planned, kept, skipped;
  for (const NM& nm : table) planned.push_back(absl::StrCat(nm.n, ":", nm.m));
  for (const auto& [start, nm] : stages) kept.push_back(absl::StrCat(nm.n, ":", nm.m));
  for (const std::string& nm : planned) {
    if (std::find(kept.begin(), kept.end(), nm) == kept.end()) skipped.push_back(nm);
  }
  int enough = total_epochs;  // The shortest schedule whose stages all start apart.
  while (enough < (1 << 20) && StructureDecayStages(config, enough, config.nm).size() < table.size())
    ++enough;
  return absl::StrCat("sparsity.structure_decay_flag: the structure decay plans ", table.size(), " stages (",
                      absl::StrJoin(planned, ", "), ") but the ", total_epochs,
                      " epochs they divide (schedule.epochs) give ", stages.size(), " (",
                      absl::StrJoin(kept, ", "), "): ", absl::StrJoin(skipped, ", "),
                      " never train; schedule.epochs >= ", enough, " gives each stage an epoch");
}

NM StageAtEpoch(const SparsityConfig& config, int total_epochs, NM target, int epoch) {
  const auto stages = StructureDecayStages(config, total_epochs, target);
  NM current = stages.front().second;
  for (const auto& [start, nm] : stages) {
    if (start <= epoch) current = nm;
  }
  return current;
}

}  // namespace nmsparse
