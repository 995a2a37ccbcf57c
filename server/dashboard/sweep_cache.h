// What the dashboard knows of a sweep, taken once and shared by every request until it changes (issue 29):
// a snapshot of the sweep and its run table, with a version (a hash of what the table shows), and the
// sweep's figures and report page, built once per version. Polls that find the version unchanged cost a
// hash compare; a sweep that has ended is not re-read while its run counts stay the same, and its figures
// are built once per version; a live one is re-read at most every `live_refresh`, and its figures (whose
// curves grow without a version change) redrawn at most every `figure_refresh`. Requests for one sweep wait
// for its one build; other sweeps' do not.
#ifndef NMSPARSE_SERVER_DASHBOARD_SWEEP_CACHE_H_
#define NMSPARSE_SERVER_DASHBOARD_SWEEP_CACHE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/proto_json.h"
#include "report/figure.h"
#include "report/sweep_data.h"
#include "server/dashboard/run_rows.h"
#include "server/dashboard/sweep_reader.h"
#include "server/dashboard/versioned_response.h"

namespace nmsparse::server {

struct SweepSnapshot {
  Json sweep;           // GetSweep's JSON without its spec (which may be megabytes).
  std::string version;  // Changes when the sweep or any row of its table does.
  bool ended = false;   // No run will change any more: cancelled, or every run ended and no search goes on.
  std::vector<RunRow> rows;
  std::string counts_key;  // The run counts it was taken at.
  absl::Time taken;
};

// A sweep's figures and report page as of one snapshot; SVGs are drawn on first request and kept.
struct FigureSet {
  std::string etag;  // Snapshot version and build number.
  std::vector<report::Figure> figures;
  CompressedBody figures_body;  // report/figure_json.h's document of `figures`: GET /api/sweeps/S/figures.
  // The data the figures were built from: the report page (asked for far less often than the figures) is
  // rendered from it on its first request, not with every build.
  std::shared_ptr<const report::SweepData> data;
  absl::Time built;
  std::string version;
  absl::Mutex mu;
  std::map<std::string, std::shared_ptr<const CompressedBody>> svgs ABSL_GUARDED_BY(mu);  // By figure id.
  std::shared_ptr<const CompressedBody> report_html ABSL_GUARDED_BY(mu);
};

class SweepCache {
 public:
  struct Options {
    absl::Duration live_refresh = absl::Seconds(2);
    absl::Duration figure_refresh = absl::Seconds(15);
    size_t max_sweeps = 32;  // Least recently asked for are dropped past it.
  };
  SweepCache(const SweepReader* reader, Options options) : reader_(reader), options_(options) {}

  absl::StatusOr<std::shared_ptr<const SweepSnapshot>> Snapshot(int64_t sweep_id);
  absl::StatusOr<std::shared_ptr<FigureSet>> Figures(int64_t sweep_id);
  // The figure's SVG, drawn once per FigureSet.
  absl::StatusOr<std::shared_ptr<const CompressedBody>> Svg(FigureSet& set, const std::string& figure_id);
  // The HTML report of the set's data, rendered once per FigureSet.
  std::shared_ptr<const CompressedBody> ReportHtml(FigureSet& set);

  // Times the figures were built and SVGs drawn (tests observe caching by these, not by timing).
  int64_t figure_builds() const { return figure_builds_; }
  int64_t svg_renders() const { return svg_renders_; }
  int64_t report_renders() const { return report_renders_; }

 private:
  struct Entry {
    absl::Mutex mu;  // One build of this sweep at a time.
    std::shared_ptr<const SweepSnapshot> snapshot ABSL_GUARDED_BY(mu);
    std::shared_ptr<FigureSet> figures ABSL_GUARDED_BY(mu);
    uint64_t last_used = 0;
  };
  std::shared_ptr<Entry> EntryFor(int64_t sweep_id);
  absl::StatusOr<std::shared_ptr<const SweepSnapshot>> SnapshotLocked(Entry& entry, int64_t sweep_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(entry.mu);

  const SweepReader* reader_;
  const Options options_;
  absl::Mutex mu_;
  std::map<int64_t, std::shared_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t uses_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<int64_t> figure_builds_{0};
  std::atomic<int64_t> svg_renders_{0};
  std::atomic<int64_t> report_renders_{0};
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_DASHBOARD_SWEEP_CACHE_H_
