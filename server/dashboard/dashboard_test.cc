// Issue 29: the dashboard's run table is paged, filtered and sorted on the server within limits.h's bounds;
// the sweep's poll answers 304 while its version is unchanged, a new version when a run changes, and says
// when the sweep has ended (its page then stops polling); figures are built once per version (observed by
// the build counter and the ETag's build number, not by timing) and sent gzip'd. The real coordinator
// in-process on loopback with a SQLite file, the real dashboard over HTTP.
#include <gtest/gtest.h>
#include <httplib.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/proto_json.h"
#include "server/dashboard/dashboard_server.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

using testing::Attempt;
using testing::FakeWorker;
using testing::GatewayComplete;
using testing::GatewayStart;
using testing::MSweep;
using testing::ReportEpoch;
using testing::TempDbPath;
using testing::TestServer;

class DashboardTest : public ::testing::Test {
 protected:
  DashboardTest() : server_(TempDbPath("dashboard_test")) {}

  void SetUp() override {
    DashboardOptions options{"127.0.0.1:0"};
    options.cache.live_refresh = absl::ZeroDuration();  // Every request re-reads a live sweep.
    options.cache.figure_refresh = absl::ZeroDuration();
    auto started = DashboardServer::Start(server_.server().coordinator(), options);
    ASSERT_TRUE(started.ok()) << started.status();
    dashboard_ = std::move(*started);
    http_ = std::make_unique<httplib::Client>("127.0.0.1", dashboard_->port());
  }

  // A sweep of `n` runs (axis m = 1..n); returns its id and fills run_ids_.
  int64_t Submit(int n, uint32_t max_retries = 0) {
    std::vector<std::string> values;
    for (int i = 1; i <= n; ++i) values.push_back(std::to_string(i));
    v1::SubmitSweepRequest request;
    *request.mutable_spec() = MSweep("paged", values);
    request.mutable_spec()->set_max_retries(max_retries);
    v1::SubmitSweepResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(server_.coordinator().SubmitSweep(&context, request, &response).ok());
    for (const v1::Run& run : response.runs()) run_ids_.push_back(run.id());
    return response.sweep().id();
  }

  void CancelRun(int64_t run_id) {
    v1::CancelRunRequest request;
    request.set_run_id(run_id);
    v1::CancelRunResponse response;
    grpc::ClientContext context;
    ASSERT_TRUE(server_.coordinator().CancelRun(&context, request, &response).ok());
  }

  void CancelSweep(int64_t sweep_id) {
    v1::CancelSweepRequest request;
    request.set_sweep_id(sweep_id);
    v1::CancelSweepResponse response;
    grpc::ClientContext context;
    ASSERT_TRUE(server_.coordinator().CancelSweep(&context, request, &response).ok());
  }

  // The body of a 200 answer as JSON (a failed expectation and null otherwise).
  Json GetJson(const std::string& path) {
    httplib::Result res = http_->Get(path.c_str());
    if (!res) {
      ADD_FAILURE() << path << ": " << httplib::to_string(res.error());
      return nullptr;
    }
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
    return res->status == 200 ? Json::parse(res->body) : Json();
  }

  int Status(const std::string& path, std::string* body = nullptr) {
    httplib::Result res = http_->Get(path.c_str());
    if (!res) return -1;
    if (body) *body = res->body;
    return res->status;
  }

  TestServer server_;
  std::unique_ptr<DashboardServer> dashboard_;
  std::unique_ptr<httplib::Client> http_;
  std::vector<int64_t> run_ids_;
};

std::vector<int64_t> Ids(const Json& page) {
  std::vector<int64_t> ids;
  for (const Json& r : page["runs"]) ids.push_back(r["id"].get<int64_t>());
  return ids;
}

TEST_F(DashboardTest, RunsArePagedFilteredAndSortedOnTheServer) {
  const int64_t sweep = Submit(30);
  ASSERT_EQ(run_ids_.size(), 30u);
  const std::string runs = absl::StrCat("/api/sweeps/", sweep, "/runs");
  const Json first = GetJson(runs + "?limit=10");
  EXPECT_EQ(first["total"], 30);
  EXPECT_EQ(first["matched"], 30);
  EXPECT_EQ(Ids(first), std::vector<int64_t>(run_ids_.begin(), run_ids_.begin() + 10));
  EXPECT_EQ(Ids(GetJson(runs + "?offset=25&limit=10")),
            std::vector<int64_t>(run_ids_.begin() + 25, run_ids_.end()));
  EXPECT_TRUE(GetJson(runs + "?offset=30")["runs"].empty());
  EXPECT_EQ(GetJson(runs + "?limit=1&sort=id&desc=1")["runs"][0]["id"], run_ids_.back());
  // Filters: a label's text, a state.
  const Json seven = GetJson(runs + "?q=m%3D7");
  EXPECT_EQ(seven["matched"], 1);
  EXPECT_EQ(seven["runs"][0]["labels"], "m=7");
  CancelRun(run_ids_[4]);
  const Json cancelled = GetJson(runs + "?state=CANCELLED");
  EXPECT_EQ(Ids(cancelled), std::vector<int64_t>{run_ids_[4]});
  EXPECT_EQ(cancelled["total"], 30);
  EXPECT_EQ(GetJson(runs + "?sort=state&limit=1")["runs"][0]["id"], run_ids_[4]);  // CANCELLED < QUEUED.
  // Bounds, at the server, naming the parameter.
  std::string body;
  EXPECT_EQ(Status(runs + "?limit=501", &body), 400);
  EXPECT_NE(body.find("limit: '501' is not a number in [1, 500]"), std::string::npos) << body;
  EXPECT_EQ(Status(runs + "?limit=0"), 400);
  EXPECT_EQ(Status(runs + "?offset=-1"), 400);
  EXPECT_EQ(Status(runs + "?state=NOPE", &body), 400);
  EXPECT_NE(body.find("state: 'NOPE' is not a run state"), std::string::npos) << body;
  EXPECT_EQ(Status(runs + "?q=" + std::string(257, 'x'), &body), 400);
  EXPECT_NE(body.find("q: 257 bytes, more than the limit of 256"), std::string::npos) << body;
  EXPECT_EQ(Status("/api/sweeps/999/runs"), 404);
}

TEST_F(DashboardTest, PollAnswers304UntilTheSweepChangesAndSaysWhenItEnded) {
  const int64_t sweep = Submit(3);
  const std::string path = absl::StrCat("/api/sweeps/", sweep);
  httplib::Result first = http_->Get(path.c_str());
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200);
  const Json summary = Json::parse(first->body);
  EXPECT_EQ(summary["ended"], false);
  EXPECT_EQ(summary["total"], 3);
  EXPECT_FALSE(summary["sweep"].contains("spec")) << "the poll does not carry the spec";
  const std::string etag = first->get_header_value("ETag");
  ASSERT_EQ(etag, absl::StrCat("\"", summary["version"].get<std::string>(), "\""));
  httplib::Result same = http_->Get(path.c_str(), {{"If-None-Match", etag}});
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 304);
  EXPECT_TRUE(same->body.empty());
  // A page of the table is 304 too while nothing changed.
  httplib::Result page = http_->Get((path + "/runs").c_str());
  ASSERT_TRUE(page);
  httplib::Result page_again =
      http_->Get((path + "/runs").c_str(), {{"If-None-Match", page->get_header_value("ETag")}});
  ASSERT_TRUE(page_again);
  EXPECT_EQ(page_again->status, 304);

  CancelRun(run_ids_[0]);
  httplib::Result changed = http_->Get(path.c_str(), {{"If-None-Match", etag}});
  ASSERT_TRUE(changed);
  EXPECT_EQ(changed->status, 200);
  EXPECT_NE(Json::parse(changed->body)["version"], summary["version"]);
  EXPECT_EQ(Json::parse(changed->body)["ended"], false);

  CancelSweep(sweep);
  EXPECT_EQ(GetJson(path)["ended"], true);
  std::string html;
  ASSERT_EQ(Status(absl::StrCat("/sweeps/", sweep), &html), 200);
  EXPECT_NE(html.find("data-ended=\"true\""), std::string::npos) << "the page starts without polling";
}

// Issue 40: /api/runs/ID carries an ETag like the sweep APIs: 304 while the run is unchanged, 200 with a
// new ETag once it changes.
TEST_F(DashboardTest, RunAnswers304UntilTheRunChanges) {
  Submit(2);
  const std::string path = absl::StrCat("/api/runs/", run_ids_[0]);
  httplib::Result first = http_->Get(path.c_str());
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  const std::string etag = first->get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  httplib::Result same = http_->Get(path.c_str(), {{"If-None-Match", etag}});
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 304);
  EXPECT_TRUE(same->body.empty());
  const std::string other = absl::StrCat("/api/runs/", run_ids_[1]);
  httplib::Result other_run = http_->Get(other.c_str(), {{"If-None-Match", etag}});
  ASSERT_TRUE(other_run);
  EXPECT_EQ(other_run->status, 200) << "another run never matches";

  CancelRun(run_ids_[0]);
  httplib::Result changed = http_->Get(path.c_str(), {{"If-None-Match", etag}});
  ASSERT_TRUE(changed);
  EXPECT_EQ(changed->status, 200);
  EXPECT_NE(changed->get_header_value("ETag"), etag);
  EXPECT_EQ(Json::parse(changed->body)["run"]["state"], "CANCELLED") << changed->body;
}

TEST_F(DashboardTest, FiguresAreBuiltOncePerVersionAndSentGzipped) {
  const int64_t sweep = Submit(2);
  CancelSweep(sweep);  // Ended: its version holds.
  const std::string svg = absl::StrCat("/sweeps/", sweep, "/report/curves_loss.svg");
  httplib::Result first = http_->Get(svg.c_str());
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  EXPECT_NE(first->body.find("<svg"), std::string::npos);
  httplib::Result second = http_->Get(svg.c_str());
  ASSERT_TRUE(second);
  EXPECT_EQ(second->get_header_value("ETag"), first->get_header_value("ETag"));
  EXPECT_EQ(Status(absl::StrCat("/sweeps/", sweep, "/report/")), 200);
  EXPECT_EQ(Status(absl::StrCat("/sweeps/", sweep, "/report/top1_vs_density.svg")), 200);
  EXPECT_EQ(dashboard_->cache().figure_builds(), 1);
  EXPECT_EQ(dashboard_->cache().svg_renders(), 2);
  httplib::Result revalidated = http_->Get(svg.c_str(), {{"If-None-Match", first->get_header_value("ETag")}});
  ASSERT_TRUE(revalidated);
  EXPECT_EQ(revalidated->status, 304);
  EXPECT_EQ(dashboard_->cache().svg_renders(), 2);

  // Compressed once, sent as gzip to a client that accepts it (cpp-httplib's client inflates it back).
  httplib::Result gzipped = http_->Get(svg.c_str(), {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(gzipped);
  EXPECT_EQ(gzipped->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(gzipped->body, first->body);
  httplib::Result json =
      http_->Get(absl::StrCat("/api/sweeps/", sweep, "/runs").c_str(), {{"Accept-Encoding", "gzip, br"}});
  ASSERT_TRUE(json);
  EXPECT_EQ(json->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(Json::parse(json->body)["total"], 2);
}

// The sweep page's figures: one document per version with an ETag, the same build the SVGs and the report
// use; a poll with the ETag answers 304 without building again.
TEST_F(DashboardTest, FigureDocumentIsBuiltOncePerVersion) {
  const int64_t sweep = Submit(2);
  CancelSweep(sweep);
  const std::string path = absl::StrCat("/api/sweeps/", sweep, "/figures");
  httplib::Result first = http_->Get(path.c_str());
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  const Json doc = Json::parse(first->body);
  ASSERT_TRUE(doc["figures"].is_array());
  bool has_loss = false;
  for (const Json& f : doc["figures"]) has_loss |= f["id"] == "curves_loss";
  EXPECT_TRUE(has_loss) << first->body;
  httplib::Result again = http_->Get(path.c_str(), {{"If-None-Match", first->get_header_value("ETag")}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_EQ(Status(absl::StrCat("/sweeps/", sweep, "/report/curves_loss.svg")), 200);
  EXPECT_EQ(dashboard_->cache().figure_builds(), 1);
  // The report page is rendered on its first request, from the same build, and once.
  EXPECT_EQ(dashboard_->cache().report_renders(), 0);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(Status(absl::StrCat("/sweeps/", sweep, "/report/")), 200);
  EXPECT_EQ(dashboard_->cache().report_renders(), 1);
  EXPECT_EQ(dashboard_->cache().figure_builds(), 1);
}

// The figures' scripts are compressed once at start: left to cpp-httplib, plotly.js's 8.6 MB were brotli'd on
// every request (10 s of a core before a new browser could draw). One Cache-Control, for a year.
TEST_F(DashboardTest, ScriptsAreSentPrecompressedAndKeptForAYear) {
  for (const char* path : {"/static/plotly.js", "/static/figures.js"}) {
    httplib::Result res = http_->Get(path, {{"Accept-Encoding", "br, gzip"}});
    ASSERT_TRUE(res) << path;
    ASSERT_EQ(res->status, 200) << path;
    EXPECT_EQ(res->get_header_value("Content-Encoding"), "gzip") << path;
    EXPECT_EQ(res->get_header_value_count("Cache-Control"), 1u) << path;
    EXPECT_EQ(res->get_header_value("Cache-Control"), "public, max-age=31536000, immutable") << path;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/javascript; charset=utf-8") << path;
  }
}

// Issue 40: one column per final metric, sorted as numbers over the whole sweep (10.5 after 9.25, which a
// text sort puts first), runs without the metric last in either direction; the page's first render as its
// URL asks. The run page's data: the finals in nmctl's format, the state history and every attempt's points.
TEST_F(DashboardTest, FinalMetricsAreSortableColumnsAndTheRunPageHasItsData) {
  const int64_t sweep = Submit(3, /*max_retries=*/1);
  ASSERT_EQ(run_ids_.size(), 3u);
  const int64_t a = run_ids_[0], b = run_ids_[1], c = run_ids_[2];
  FakeWorker worker(&server_.gateway(), 3);
  ASSERT_EQ(worker.WaitAssignments(3).size(), 3u);
  for (int64_t run : run_ids_) ASSERT_TRUE(GatewayStart(server_.gateway(), Attempt(run, 1)).ok());
  ASSERT_TRUE(ReportEpoch(server_.gateway(), Attempt(a, 1), 0, {{"loss", 2.0}, {"lr", 0.001}}).ok());
  ASSERT_TRUE(GatewayComplete(server_.gateway(), Attempt(a, 1), v1::FAILED, 137).ok());  // Retried.
  ASSERT_TRUE(GatewayComplete(server_.gateway(), Attempt(b, 1), v1::SUCCEEDED, 0, 9.25).ok());
  CancelRun(c);                                     // No final metrics.
  ASSERT_EQ(worker.WaitAssignments(4).size(), 4u);  // Attempt 2 of a.
  ASSERT_TRUE(GatewayStart(server_.gateway(), Attempt(a, 2)).ok());
  ASSERT_TRUE(ReportEpoch(server_.gateway(), Attempt(a, 2), 1, {{"loss", 1.0}, {"lr", 0.0005}}).ok());
  ASSERT_TRUE(GatewayComplete(server_.gateway(), Attempt(a, 2), v1::SUCCEEDED, 0, 10.5).ok());

  const std::string runs = absl::StrCat("/api/sweeps/", sweep, "/runs");
  const Json up = GetJson(runs + "?sort=top1");
  EXPECT_EQ(up["metrics"], Json({"top1"}));
  EXPECT_EQ(Ids(up), (std::vector<int64_t>{b, a, c}));
  EXPECT_EQ(Ids(GetJson(runs + "?sort=top1&desc=1")), (std::vector<int64_t>{a, b, c}));
  EXPECT_EQ(up["runs"][1]["finals"]["top1"], 10.5);
  EXPECT_EQ(up["runs"][1]["final_texts"]["top1"], "10.5");
  EXPECT_TRUE(up["runs"][2]["finals"].empty());

  std::string html;
  ASSERT_EQ(Status(absl::StrCat("/sweeps/", sweep, "?sort=top1&desc=1"), &html), 200);
  const size_t at_a = html.find(absl::StrCat("<a href=\"/runs/", a, "\">")),
               at_b = html.find(absl::StrCat("<a href=\"/runs/", b, "\">"));
  ASSERT_NE(at_a, std::string::npos) << html;
  EXPECT_LT(at_a, at_b) << "descending: 10.5 first";
  EXPECT_NE(html.find("aria-sort=\"descending\"><a href=\"?sort=top1\" data-sort=\"top1\">top1"),
            std::string::npos)
      << html;
  EXPECT_EQ(Status(absl::StrCat("/sweeps/", sweep, "?limit=0")), 400);

  const Json run = GetJson(absl::StrCat("/api/runs/", a));
  EXPECT_EQ(run["final_texts"], Json({{"top1", "10.5"}}));
  EXPECT_FALSE(run["run"]["resolved_spec"].get<std::string>().empty());
  std::set<int> attempts;
  for (const Json& p : run["metrics"]) attempts.insert(p["attempt"].get<int>());
  EXPECT_EQ(attempts, (std::set<int>{1, 2}));
  ASSERT_EQ(Status(absl::StrCat("/runs/", a), &html), 200);
  for (const char* part : {"id=\"chart-loss\"", "id=\"chart-lr\"", "id=\"chart-d\"", "id=\"chart-sparsity\"",
                           "id=\"config\"", "<td>top1</td><td class=\"num\">10.5</td>", "id=\"history\""}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
}

// Issue 36: login CSRF. A form on another site that posts /login sets no cookie; the dashboard's own page
// does, SameSite=Strict and HttpOnly.
TEST_F(DashboardTest, LoginFromAnotherSiteSetsNoCookie) {
  const std::string own = absl::StrCat("http://127.0.0.1:", dashboard_->port());
  for (const std::string origin : {"http://evil.example", "null"}) {
    httplib::Result res = http_->Post("/login", httplib::Headers{{"Origin", origin}}, "token=t",
                                      "application/x-www-form-urlencoded");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 403) << origin;
    EXPECT_FALSE(res->has_header("Set-Cookie")) << origin;
  }
  httplib::Result no_origin = http_->Post("/login", "token=t", "application/x-www-form-urlencoded");
  ASSERT_TRUE(no_origin);
  EXPECT_EQ(no_origin->status, 403);
  httplib::Result res = http_->Post("/login", httplib::Headers{{"Origin", own}}, "token=t",
                                    "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 302);
  EXPECT_EQ(res->get_header_value("Set-Cookie"), "nmsparse_token=t; Path=/; HttpOnly; SameSite=Strict");
}

}  // namespace
}  // namespace nmsparse::server
