#include "server/sweeps/parallel_expander.h"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "schemas/sweep_size.h"

namespace nmsparse::server {
namespace {

// The sweep restricted to first-axis values [begin, end).
v1::SweepSpec Slice(const v1::SweepSpec& spec, int begin, int end) {
  v1::SweepSpec part = spec;
  auto* values = part.mutable_grid(0)->mutable_values();
  values->DeleteSubrange(end, values->size() - end);
  values->DeleteSubrange(0, begin);
  return part;
}

absl::StatusOr<std::vector<NewRun>> ExpandSlices(const SweepExpander& serial, const v1::SweepSpec& spec,
                                                 int chunks) {
  const int values = spec.grid(0).values_size();
  std::vector<absl::StatusOr<std::vector<NewRun>>> parts(chunks);
  std::vector<std::thread> pool;
  for (int c = 0; c < chunks; ++c) {
    int begin = values * c / chunks, end = values * (c + 1) / chunks;
    pool.emplace_back([&, c, begin, end] { parts[c] = serial(Slice(spec, begin, end)); });
  }
  for (std::thread& t : pool) t.join();
  std::vector<NewRun> out;
  for (auto& part : parts) {
    if (!part.ok()) return serial(spec);  // The serial error names the run by its index in the whole sweep.
    for (NewRun& r : *part) {
      r.index = static_cast<uint32_t>(out.size());
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace

SweepExpander ParallelExpander(SweepExpander serial, int threads, size_t min_runs) {
  if (threads <= 1) return serial;
  return [serial = std::move(serial), threads, min_runs](const v1::SweepSpec& spec) {
    if (spec.random_size() > 0 || spec.grid_size() == 0 ||
        SweepRunCount(spec) < static_cast<int64_t>(min_runs))
      return serial(spec);
    int chunks = std::min(threads, spec.grid(0).values_size());
    if (chunks <= 1) return serial(spec);
    return ExpandSlices(serial, spec, chunks);
  };
}

}  // namespace nmsparse::server
