#include "server/dashboard/sweep_cache.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "contract/metric_names.h"
#include "report/figure_json.h"
#include "report/figures.h"
#include "report/gnuplot_svg.h"
#include "report/html_report.h"
#include "report/web_assets.h"
#include "schemas/more_runs.h"

namespace nmsparse::server {
namespace {

std::string CountsKey(const v1::Sweep& sweep) {
  const std::map<std::string, uint32_t> counts(sweep.run_counts().begin(), sweep.run_counts().end());
  std::string key = absl::StrCat(sweep.cancelled(), "|", sweep.search_ended(), "|");
  for (const auto& [state, n] : counts) absl::StrAppend(&key, state, "=", n, ",");
  return key;
}

bool Ended(const v1::Sweep& sweep) {
  if (sweep.cancelled()) return true;
  uint64_t total = 0;
  for (const auto& [state, n] : sweep.run_counts()) {
    v1::RunState s = v1::RUN_STATE_UNSPECIFIED;
    if (n > 0 && v1::RunState_Parse(state, &s) &&
        (s == v1::QUEUED || s == v1::ASSIGNED || s == v1::RUNNING)) {
      return false;
    }
    total += n;
  }
  return !MoreRunsComing(sweep, total);
}

std::string VersionOf(const std::string& counts_key, const std::vector<RunRow>& rows) {
  size_t h = std::hash<std::string>()(counts_key);
  for (const RunRow& r : rows) {
    std::string row = absl::StrCat(r.id, "|", r.state, "|", r.attempt);
    for (const auto& [name, value] : r.finals)
      absl::StrAppend(&row, "|", name, "=", absl::StrFormat("%.17g", value));
    h = h * 1000003u ^ std::hash<std::string>()(row);
  }
  return absl::StrCat(absl::Hex(h, absl::kZeroPad16));
}

}  // namespace

std::shared_ptr<SweepCache::Entry> SweepCache::EntryFor(int64_t sweep_id) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<Entry>& entry = entries_[sweep_id];
  if (!entry) entry = std::make_shared<Entry>();
  entry->last_used = ++uses_;
  while (entries_.size() > options_.max_sweeps) {
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second->last_used < oldest->second->last_used) oldest = it;
    }
    entries_.erase(oldest);  // Requests still holding it finish with their copy.
  }
  return entry;
}

absl::StatusOr<std::shared_ptr<const SweepSnapshot>> SweepCache::SnapshotLocked(Entry& entry,
                                                                                int64_t sweep_id) {
  const absl::Time now = absl::Now();
  const std::shared_ptr<const SweepSnapshot>& old = entry.snapshot;
  if (old && !old->ended && now - old->taken < options_.live_refresh) return old;
  // O(1): counts are kept by the store.
  NM_ASSIGN_OR_RETURN(v1::Sweep sweep, reader_->SweepProto(sweep_id));
  const std::string counts_key = CountsKey(sweep);
  if (old && old->ended && old->counts_key == counts_key) return old;
  NM_ASSIGN_OR_RETURN(std::vector<v1::Run> runs, reader_->Runs(sweep_id));
  auto snapshot = std::make_shared<SweepSnapshot>();
  snapshot->rows.reserve(runs.size());
  for (const v1::Run& run : runs) snapshot->rows.push_back(RowOf(run));
  snapshot->counts_key = counts_key;
  snapshot->ended = Ended(sweep);
  snapshot->version = VersionOf(counts_key, snapshot->rows);
  snapshot->taken = now;
  sweep.clear_spec();
  snapshot->sweep = ToJson(sweep);
  entry.snapshot = snapshot;
  return entry.snapshot;
}

absl::StatusOr<std::shared_ptr<const SweepSnapshot>> SweepCache::Snapshot(int64_t sweep_id) {
  std::shared_ptr<Entry> entry = EntryFor(sweep_id);
  absl::MutexLock lock(&entry->mu);
  return SnapshotLocked(*entry, sweep_id);
}

absl::StatusOr<std::shared_ptr<FigureSet>> SweepCache::Figures(int64_t sweep_id) {
  std::shared_ptr<Entry> entry = EntryFor(sweep_id);
  absl::MutexLock lock(&entry->mu);
  NM_ASSIGN_OR_RETURN(std::shared_ptr<const SweepSnapshot> snapshot, SnapshotLocked(*entry, sweep_id));
  const std::shared_ptr<FigureSet>& old = entry->figures;
  const absl::Time now = absl::Now();
  // An ended sweep's figures hold while its version does; a live sweep's are redrawn at most every
  // figure_refresh, however often its version changes (at 50k runs it changes all the time).
  if (old &&
      (snapshot->ended ? old->version == snapshot->version : now - old->built < options_.figure_refresh)) {
    return old;
  }
  NM_ASSIGN_OR_RETURN(report::SweepData data, reader_->SweepData(sweep_id));
  auto set = std::make_shared<FigureSet>();
  set->data = std::make_shared<const report::SweepData>(std::move(data));
  set->figures = report::SweepFigures(*set->data, contract::kTop1);
  set->figures_body = Compress(report::ScriptSafeJsonText(report::FiguresDocument(set->figures, *set->data)));
  set->version = snapshot->version;
  set->built = now;
  set->etag = absl::StrCat(snapshot->version, "-", ++figure_builds_);
  entry->figures = set;
  return set;
}

absl::StatusOr<std::shared_ptr<const CompressedBody>> SweepCache::Svg(FigureSet& set,
                                                                      const std::string& figure_id) {
  absl::MutexLock lock(&set.mu);
  auto it = set.svgs.find(figure_id);
  if (it != set.svgs.end()) return it->second;
  for (const report::Figure& f : set.figures) {
    if (f.id != figure_id) continue;
    NM_ASSIGN_OR_RETURN(std::string svg, report::RenderSvg(f));
    ++svg_renders_;
    return set.svgs[figure_id] = std::make_shared<const CompressedBody>(Compress(std::move(svg)));
  }
  return absl::NotFoundError(absl::StrCat("no figure ", figure_id));
}

std::shared_ptr<const CompressedBody> SweepCache::ReportHtml(FigureSet& set) {
  absl::MutexLock lock(&set.mu);
  if (set.report_html) return set.report_html;
  report::ReportOptions options;  // The page's scripts come from the dashboard's /static/.
  options.script_base = "/static/";
  options.script_query = report::AssetVersion();
  ++report_renders_;
  set.report_html = std::make_shared<const CompressedBody>(
      Compress(report::ReportHtml(*set.data, contract::kTop1, set.figures, options)));
  return set.report_html;
}

}  // namespace nmsparse::server
