#include "report/run_marks_cap.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "report/run_facts.h"

namespace nmsparse::report {
namespace {

// A fixed mix of the run id (splitmix64's finaliser): the sample depends on nothing but the ids.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// At most max_runs of the sweep's runs: a tenth of them from each end of the final metric, the rest in the
// order of their mixed ids.
absl::flat_hash_set<int64_t> ChosenRuns(const SweepData& data, const std::string& metric, size_t max_runs) {
  std::vector<std::pair<double, int64_t>> scored;
  std::vector<std::pair<uint64_t, int64_t>> others;
  for (const RunData& r : data.runs) {
    const double v = FinalMetric(r.run, metric);
    if (std::isfinite(v)) scored.emplace_back(v, r.run.id());
    others.emplace_back(Mix(static_cast<uint64_t>(r.run.id())), r.run.id());
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

// Keeps the points of `s` whose run is chosen; false when none went.
bool KeepChosenPoints(const absl::flat_hash_set<int64_t>& chosen, Series& s) {
  Series kept = s;
  kept.x.clear(), kept.y.clear(), kept.err.clear(), kept.run_ids.clear(), kept.categories.clear();
  for (size_t i = 0; i < s.run_ids.size(); ++i) {
    if (!chosen.contains(s.run_ids[i])) continue;
    kept.x.push_back(s.x[i]);
    kept.y.push_back(s.y[i]);
    if (!s.err.empty()) kept.err.push_back(s.err[i]);
    kept.run_ids.push_back(s.run_ids[i]);
    if (!s.categories.empty()) kept.categories.push_back(s.categories[i]);
  }
  const bool changed = kept.run_ids.size() != s.run_ids.size();
  s = std::move(kept);
  return changed;
}

// Drops the points of a polyline that lie inside a flat stretch (the same y as both neighbours, x between
// theirs): the line draws the same.
void DropFlatInnerPoints(Series& s) {
  if (s.x.size() < 3 || !s.err.empty() || !s.categories.empty()) return;
  const bool runs = s.run_ids.size() == s.x.size();
  Series kept = s;
  kept.x = {s.x.front()}, kept.y = {s.y.front()}, kept.run_ids.clear();
  if (runs) kept.run_ids.push_back(s.run_ids.front());
  for (size_t i = 1; i < s.x.size(); ++i) {
    const bool last = i + 1 == s.x.size();
    if (!last && s.y[i] == kept.y.back() && s.y[i] == s.y[i + 1] && kept.x.back() <= s.x[i] &&
        s.x[i] <= s.x[i + 1]) {
      continue;
    }
    kept.x.push_back(s.x[i]);
    kept.y.push_back(s.y[i]);
    if (runs) kept.run_ids.push_back(s.run_ids[i]);
  }
  s = std::move(kept);
}

bool KeepChosenLines(const absl::flat_hash_set<int64_t>& chosen, Figure& f) {
  std::vector<size_t> at;
  for (size_t i = 0; i < f.run_ids.size(); ++i) {
    if (chosen.contains(f.run_ids[i])) at.push_back(i);
  }
  if (at.size() == f.run_ids.size()) return false;
  auto pick = [&at](const auto& all) {
    std::remove_cv_t<std::remove_reference_t<decltype(all)>> out;
    for (size_t i : at) out.push_back(all[i]);
    return out;
  };
  for (Dimension& d : f.dimensions) d.values = pick(d.values);
  f.run_ids = pick(f.run_ids);
  return true;
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
