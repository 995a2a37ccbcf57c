// ReadCurvePage, page after page, gives exactly what one MetricPoints read per run gives (the per-run GetRun
// the reports used before): same runs in ListRuns order, same points in seq order, every attempt, whatever
// the page bounds; and no page holds more runs or points than asked.
#include "server/store/run_curves.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "server/store/event_table.h"
#include "server/store/run_table.h"
#include "server/store/store.h"
#include "server/store/sweep_table.h"

namespace nmsparse::server {
namespace {

using Curves = std::vector<std::pair<int64_t, std::vector<std::string>>>;  // Run id -> its points, as text.

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(dir ? dir : "/tmp", "/", name, "-", getpid(), ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

class RunCurvesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::Open(TempPath("runcurves"));
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    // Two sweeps whose runs and points interleave; in sweep 1 two runs share an index (a tie the run order
    // breaks by id), one run has no point, and runs have points of two attempts.
    ASSERT_TRUE(store_
                    ->Write([&](Database* db) -> absl::Status {
                      for (int s = 0; s < 2; ++s) {
                        v1::SweepSpec spec;
                        spec.set_name(absl::StrCat("s", s));
                        NM_RETURN_IF_ERROR(InsertSweep(db, spec, 1, {}).status());
                      }
                      constexpr uint32_t kIndex[] = {3, 1, 0, 1, 2, 4};
                      for (uint32_t i : kIndex) {
                        for (int64_t sweep : {1, 2}) {
                          NewRun r;
                          r.index = i;
                          r.content_hash = absl::StrCat("h", sweep, "-", i, "-", runs_.size());
                          r.resolved_spec = "model: {}";
                          NM_ASSIGN_OR_RETURN(int64_t id, InsertRun(db, sweep, r, 1, nullptr));
                          runs_.push_back(id);
                        }
                      }
                      for (int k = 0; k < 40; ++k) {
                        const int64_t run = runs_[k % (runs_.size() - 2)];  // The last two have none.
                        v1::MetricPoint p;
                        p.set_kind(k % 7 == 6 ? "final" : "step");
                        p.set_step(k);
                        p.set_epoch(k / 10);
                        (*p.mutable_values())["loss"] = 1.0 / (k + 1);
                        (*p.mutable_labels())["split"] = "val";
                        NM_RETURN_IF_ERROR(AppendMetric(db, run, k < 20 ? 1 : 2, p, 100 + k).status());
                      }
                      return absl::OkStatus();
                    })
                    .ok());
  }

  // What one read per run gives.
  Curves PerRun(int64_t sweep) {
    Curves out;
    EXPECT_TRUE(store_
                    ->Read([&](Database* db) -> absl::Status {
                      RunFilter f;
                      f.sweep_id = sweep;
                      NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, QueryRuns(db, f, RunDetail::kFull));
                      for (const RunRecord& r : runs) {
                        NM_ASSIGN_OR_RETURN(std::vector<v1::MetricPoint> points,
                                            MetricPoints(db, r.run.id(), 0));
                        auto& [id, texts] = out.emplace_back(r.run.id(), std::vector<std::string>());
                        for (const v1::MetricPoint& p : points) texts.push_back(p.ShortDebugString());
                      }
                      return absl::OkStatus();
                    })
                    .ok());
    return out;
  }

  // Every page in turn, a run cut between two pages joined again.
  Curves Paged(int64_t sweep, const CurvePageBounds& bounds) {
    Curves out;
    CurveCursor at;
    for (int pages = 0; pages < 1000; ++pages) {
      absl::StatusOr<CurvePage> page = absl::UnknownError("not read");
      EXPECT_TRUE(
          store_->Read([&](Database* db) { return (page = ReadCurvePage(db, sweep, at, bounds)).status(); })
              .ok())
          << page.status();
      if (!page.ok()) return out;
      EXPECT_LE(page->runs.size(), bounds.runs);
      size_t points = 0;
      for (const RunCurve& c : page->runs) {
        points += c.points.size();
        EXPECT_EQ(c.record.run.resolved_spec(), "model: {}");  // Full runs, with their specs.
        if (out.empty() || out.back().first != c.record.run.id())
          out.emplace_back(c.record.run.id(), std::vector<std::string>());
        for (const v1::MetricPoint& p : c.points) out.back().second.push_back(p.ShortDebugString());
      }
      EXPECT_LE(points, bounds.points);
      if (bounds.point_bytes == 1) {
        EXPECT_LE(points, 1u);  // Each point is past the bytes: one a page.
      }
      if (!page->more) return out;
      at = page->next;
    }
    ADD_FAILURE() << "pages never ended";
    return out;
  }

  std::unique_ptr<Store> store_;
  std::vector<int64_t> runs_;
};

TEST_F(RunCurvesTest, PagesEqualOneReadPerRunWhateverTheBounds) {
  for (int64_t sweep : {1, 2}) {
    const Curves expected = PerRun(sweep);
    ASSERT_EQ(expected.size(), 6u);
    size_t points = 0;
    for (const auto& [id, texts] : expected) points += texts.size();
    ASSERT_EQ(points, 20u);  // Each sweep holds half of the 40 points.
    for (uint32_t max_runs : {1u, 2u, 5u, 100u}) {
      for (uint32_t max_points : {1u, 2u, 3u, 7u, 1000u}) {
        for (int64_t max_bytes : {int64_t{1}, int64_t{100}, int64_t{1} << 20}) {
          EXPECT_EQ(Paged(sweep, {max_runs, max_points, max_bytes}), expected)
              << "sweep " << sweep << ", " << max_runs << " runs, " << max_points << " points and "
              << max_bytes << " bytes a page";
        }
      }
    }
  }
}

TEST_F(RunCurvesTest, APageCutInsideARunGoesOnAfterItsLastPoint) {
  ASSERT_TRUE(store_
                  ->Read([&](Database* db) -> absl::Status {
                    NM_ASSIGN_OR_RETURN(CurvePage first, ReadCurvePage(db, 1, {}, {100, 2, 1 << 20}));
                    EXPECT_TRUE(first.more);
                    EXPECT_EQ(first.runs.size(), 1u);  // Run order: index 0 first; it has 4 points.
                    EXPECT_EQ(first.runs[0].points.size(), 2u);
                    EXPECT_EQ(first.next.from_run, 0u);
                    EXPECT_EQ(first.next.after_seq, first.runs[0].points.back().seq());
                    NM_ASSIGN_OR_RETURN(CurvePage past_end, ReadCurvePage(db, 1, {6, 0}, {100, 2, 1 << 20}));
                    EXPECT_TRUE(past_end.runs.empty());
                    EXPECT_FALSE(past_end.more);
                    return absl::OkStatus();
                  })
                  .ok());
}

}  // namespace
}  // namespace nmsparse::server
