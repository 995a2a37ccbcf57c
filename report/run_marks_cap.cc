#include "report/run_marks_cap.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/split_mix64.h"
#include "report/run_facts.h"

namespace nmsparse::report {
namespace {

// At most max_runs of the sweep's runs: a tenth of them from each end of the final metric, the rest in the
// order of their mixed ids.
absl::flat_hash_set<int64_t> ChosenRuns(const SweepData& data, const std::string& metric, size_t max_runs) {
  std::vector<std::pair<double, int64_t>> scored;
  std::vector<std::pair<uint64_t, int64_t>> others;
  for (const RunData& r : data.runs) {
    const double v = FinalMetric(r.run, metric);
    if (std::isfinite(v)) scored.emplace_back(v, r.run.id());
    others.emplace_back(SplitMix64(static_cast<uint64_t>(r.run.id())), r.run.id());  // Fixed by the id.
  }
  std::sort(scored.begin(), scored.end());
  absl::flat_hash_set<int64_t> chosen;
  const size_t ends = std::min(max_runs / 10, scored.size() / 2);
  for (size_t i = 0; i < ends; ++i) {
    chosen.insert(scored[i].second);
    chosen.insert(scored[scored.size() - 1 - i].second);
  }
  std::sort(others.begin(), others.end());
  for (const auto& [mixed, id] : others) {
    if (chosen.size() >= max_runs) break;
    chosen.insert(id);
  }
  return chosen;
}

// The places in `run_ids` of the chosen runs.
std::vector<size_t> ChosenPlaces(const absl::flat_hash_set<int64_t>& chosen,
                                 const std::vector<int64_t>& run_ids) {
  std::vector<size_t> at;
  for (size_t i = 0; i < run_ids.size(); ++i) {
    if (chosen.contains(run_ids[i])) at.push_back(i);
  }
  return at;
}

// `values` at the places `at` (an empty vector stays empty: an optional per-point field).
template <typename T>
void KeepPlaces(const std::vector<size_t>& at, std::vector<T>& values) {
  if (values.empty()) return;
  std::vector<T> kept;
  kept.reserve(at.size());
  for (size_t i : at) kept.push_back(std::move(values[i]));
  values = std::move(kept);
}

// Keeps the points of `s` whose run is chosen; false when none went.
bool KeepChosenPoints(const absl::flat_hash_set<int64_t>& chosen, Series& s) {
  const std::vector<size_t> at = ChosenPlaces(chosen, s.run_ids);
  if (at.size() == s.run_ids.size()) return false;
  KeepPlaces(at, s.x);
  KeepPlaces(at, s.y);
  KeepPlaces(at, s.err);
  KeepPlaces(at, s.run_ids);
  KeepPlaces(at, s.categories);
  return true;
}

// Keeps the lines of a parallel-coordinates figure whose run is chosen; false when none went.
bool KeepChosenLines(const absl::flat_hash_set<int64_t>& chosen, Figure& f) {
  const std::vector<size_t> at = ChosenPlaces(chosen, f.run_ids);
  if (at.size() == f.run_ids.size()) return false;
  for (Dimension& d : f.dimensions) KeepPlaces(at, d.values);
  KeepPlaces(at, f.run_ids);
  return true;
}

// Drops the points of a polyline that lie inside a flat stretch (the same y as both neighbours, x between
// theirs): the line draws the same.
void DropFlatInnerPoints(Series& s) {
  if (s.x.size() < 3 || !s.err.empty() || !s.categories.empty()) return;
  if (s.run_ids.size() != s.x.size()) s.run_ids.clear();
  std::vector<size_t> at = {0};
  for (size_t i = 1; i + 1 < s.x.size(); ++i) {
    const size_t prev = at.back();
    const bool flat =
        s.y[i] == s.y[prev] && s.y[i] == s.y[i + 1] && s.x[prev] <= s.x[i] && s.x[i] <= s.x[i + 1];
    if (!flat) at.push_back(i);
  }
  at.push_back(s.x.size() - 1);
  KeepPlaces(at, s.x);
  KeepPlaces(at, s.y);
  KeepPlaces(at, s.run_ids);
}

}  // namespace

void CapRunMarks(const SweepData& data, const std::string& metric, size_t max_runs,
                 std::vector<Figure>& figures) {
  if (data.runs.size() <= max_runs) return;
  const absl::flat_hash_set<int64_t> chosen = ChosenRuns(data, metric, max_runs);
  const std::string note = absl::StrCat(
      " Marks of ", chosen.size(), " of the ", data.runs.size(), " runs: the ", max_runs / 10,
      " with the highest and the lowest final ", metric, ", and a sample of the rest fixed by run id.");
  for (Figure& f : figures) {
    bool thinned = false;
    if (f.kind == Figure::Kind::kParallelCoordinates) thinned = KeepChosenLines(chosen, f);
    for (Series& s : f.series) {
      if (s.style == Series::Style::kPoints && !s.run_ids.empty()) thinned |= KeepChosenPoints(chosen, s);
      if (s.style == Series::Style::kLines && s.x.size() > max_runs) DropFlatInnerPoints(s);
    }
    if (thinned) f.caption += note;
  }
}

}  // namespace nmsparse::report
