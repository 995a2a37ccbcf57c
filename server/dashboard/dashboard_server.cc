#include "server/dashboard/dashboard_server.h"

#include <httplib.h>

#include <cstdint>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/visible_text.h"
#include "contract/metric_names.h"
#include "report/figures.h"
#include "report/gnuplot_svg.h"
#include "report/html_report.h"
#include "server/dashboard/connection_pool.h"
#include "server/dashboard/http_auth.h"
#include "server/dashboard/pages.h"
#include "server/dashboard/run_rows.h"
#include "server/dashboard/sweep_cache.h"
#include "server/dashboard/sweep_reader.h"
#include "server/dashboard/versioned_response.h"

namespace nmsparse::server {
namespace {

constexpr size_t kMaxBodyBytes = 4096;  // Only /login has a body: one token.
// Open connections served at once (a thread each, connection_pool.h); more wait in the queue. Far above what
// browsers open, so that idle or trickling sockets (issue 36: 24 of them starved the old fixed pool) cannot
// hold every thread; below the descriptor limit, so that the gRPC server and SQLite keep theirs.
constexpr int kMaxConnections = 512;
// How long a connection may sit without sending a request (before the first or between two) and wait between
// two reads of one: a browser sends at once, an idle socket gives its thread back soon.
constexpr int kIdleSeconds = 2;
constexpr int kReadSeconds = 3;
constexpr uint32_t kMaxLogLines = 2000;  // Per /logs answer.

// The id in the path (the route's first group, digits): one past int64 is refused, naming it, rather than
// read as another id.
absl::StatusOr<int64_t> IdOf(const httplib::Request& req, const char* what) {
  const std::string text = req.matches[1].str();
  int64_t id = 0;
  if (absl::SimpleAtoi(text, &id) && id > 0) return id;
  return absl::NotFoundError(absl::StrCat("no ", what, " with id ", VisibleText(text, 64), " (ids are 1 to ",
                                          std::numeric_limits<int64_t>::max(), ")"));
}

// A refusal as plain text (which a browser never renders as a page), its user text made visible.
void Error(httplib::Response& res, const absl::Status& status) {
  res.status = HttpStatusOf(status);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_content(absl::StrCat(VisibleLines(std::string(status.message())), "\n"),
                  "text/plain; charset=utf-8");
}

// Wraps a handler in the token check; a refused browser page offers /login.
httplib::Server::Handler Guarded(const TokenAuthenticator* auth, httplib::Server::Handler handler) {
  return [auth, handler](const httplib::Request& req, httplib::Response& res) {
    absl::Status allowed =
        CheckDashboardRead(auth, req.get_header_value("Authorization"), req.get_header_value("Cookie"));
    if (!allowed.ok()) {
      res.status = HttpStatusOf(allowed);
      if (res.status == 401) res.set_header("WWW-Authenticate", "Bearer");
      res.set_content(LoginPage(std::string(allowed.message())), "text/html; charset=utf-8");
      return;
    }
    handler(req, res);
  };
}

// Each names its charset, which also keeps cpp-httplib from brotli-compressing the body on every request
// (versioned_response.h).
constexpr char kJsonType[] = "application/json; charset=utf-8";
constexpr char kScriptType[] = "application/javascript; charset=utf-8";

// Valid UTF-8 and display controls escaped (ToJsonText), so that no string fails or steers the page.
void Json(httplib::Response& res, const absl::StatusOr<nmsparse::Json>& json) {
  if (!json.ok()) return Error(res, json.status());
  res.set_content(ToJsonText(*json, /*pretty=*/false), kJsonType);
}

// GET /api/sweeps/S: the sweep without its spec, its version and whether it has ended; what the sweep page
// polls.
nmsparse::Json Summary(const SweepSnapshot& snapshot) {
  return nmsparse::Json{{"sweep", snapshot.sweep},
                        {"version", snapshot.version},
                        {"ended", snapshot.ended},
                        {"total", snapshot.rows.size()}};
}

// A script whose URL carries AssetVersion: compressed once, and kept by browsers for a year.
void SendAsset(const httplib::Request& req, httplib::Response& res, const CompressedBody& body) {
  SendVersioned(req, res, report::AssetVersion().substr(3), body, kScriptType);
  res.headers.erase("Cache-Control");
  res.set_header("Cache-Control", "public, max-age=31536000, immutable");
}

}  // namespace

absl::StatusOr<std::unique_ptr<DashboardServer>> DashboardServer::Start(CoordinatorService* coordinator,
                                                                        DashboardOptions options) {
  const size_t colon = options.listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(options.listen.substr(colon + 1), &port) || port < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http_listen: '", options.listen, "' is not HOST:PORT (e.g. 127.0.0.1:8080)"));
  }
  std::string host = options.listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  std::unique_ptr<DashboardServer> out(new DashboardServer());
  out->http_ = std::make_unique<httplib::Server>();
  absl::StatusOr<std::string> plotly = report::ReadPlotlyJs(options.plotly_js_path);
  out->plotly_status_ = plotly.status();
  // Compressed once here: left to cpp-httplib, plotly.js's 8.6 MB were brotli'd at its slowest level on every
  // request, 10 s of a core before a new browser could draw anything.
  out->plotly_js_ = Compress(plotly.value_or(""));
  out->figures_js_ = Compress(report::FiguresJs());
  out->Route(coordinator, options);
  httplib::Server& http = *out->http_;
  http.new_task_queue = [] { return new ConnectionPool(kMaxConnections); };
  http.set_payload_max_length(kMaxBodyBytes);
  http.set_keep_alive_timeout(kIdleSeconds);
  http.set_read_timeout(kReadSeconds, 0);
  http.set_write_timeout(10, 0);
  http.set_keep_alive_max_count(20);
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content("internal error\n", "text/plain");
  });
  out->port_ = port == 0 ? http.bind_to_any_port(host) : (http.bind_to_port(host, port) ? port : -1);
  if (out->port_ <= 0)
    return absl::UnavailableError(absl::StrCat("--http_listen: cannot listen on ", options.listen));
  out->thread_ = std::thread([server = out.get()] { server->http_->listen_after_bind(); });
  return out;
}

DashboardServer::~DashboardServer() { Stop(); }

void DashboardServer::Stop() {
  if (!http_) return;
  http_->stop();
  if (thread_.joinable()) thread_.join();
}

void DashboardServer::Route(CoordinatorService* coordinator, const DashboardOptions& options) {
  const TokenAuthenticator* auth = options.authenticator;
  auto reader = std::make_shared<SweepReader>(coordinator);
  reader_ = reader;  // The cache reads through it: both live as long as the server.
  cache_ = std::make_shared<SweepCache>(reader.get(), options.cache);
  std::shared_ptr<SweepCache> cache = cache_;
  httplib::Server& http = *http_;
  http.Get("/", Guarded(auth, [reader](const httplib::Request&, httplib::Response& res) {
             absl::StatusOr<nmsparse::Json> sweeps = reader->Sweeps();
             if (!sweeps.ok()) return Error(res, sweeps.status());
             res.set_content(SweepsPage(*sweeps), "text/html; charset=utf-8");
           }));
  http.Get(R"(/sweeps/(\d+))", Guarded(auth, [cache](const httplib::Request& req, httplib::Response& res) {
             absl::StatusOr<int64_t> id = IdOf(req, "sweep");
             if (!id.ok()) return Error(res, id.status());
             // The table's first page as the URL asks (?sort=top1&desc=1: a sorted view can be linked).
             absl::StatusOr<RunsQuery> query = ParseRunsQuery(req.params);
             if (!query.ok()) return Error(res, query.status());
             absl::StatusOr<std::shared_ptr<const SweepSnapshot>> snapshot = cache->Snapshot(*id);
             if (!snapshot.ok()) return Error(res, snapshot.status());
             // The figures come after the page, from /api/sweeps/S/figures: the table shows at once.
             res.set_content(SweepPage(Summary(**snapshot), RunsPage((*snapshot)->rows, *query)),
                             "text/html; charset=utf-8");
           }));
  http.Get(R"(/sweeps/(\d+)/report/?)",
           Guarded(auth, [cache](const httplib::Request& req, httplib::Response& res) {
             if (req.path.back() != '/') return res.set_redirect(req.path + "/");
             absl::StatusOr<int64_t> id = IdOf(req, "sweep");
             if (!id.ok()) return Error(res, id.status());
             absl::StatusOr<std::shared_ptr<FigureSet>> set = cache->Figures(*id);
             if (!set.ok()) return Error(res, set.status());
             SendVersioned(req, res, (*set)->etag, *cache->ReportHtml(**set), "text/html; charset=utf-8");
           }));
  http.Get(R"(/sweeps/(\d+)/report/([a-z0-9_]+)\.svg)",
           Guarded(auth, [cache](const httplib::Request& req, httplib::Response& res) {
             absl::StatusOr<int64_t> id = IdOf(req, "sweep");
             if (!id.ok()) return Error(res, id.status());
             absl::StatusOr<std::shared_ptr<FigureSet>> set = cache->Figures(*id);
             if (!set.ok()) return Error(res, set.status());
             const std::string figure = req.matches[2].str();
             absl::StatusOr<std::shared_ptr<const CompressedBody>> svg = cache->Svg(**set, figure);
             if (!svg.ok()) return Error(res, svg.status());
             SendVersioned(req, res, absl::StrCat((*set)->etag, "-", figure), **svg,
                           "image/svg+xml; charset=utf-8");
           }));
  http.Get(R"(/runs/(\d+))", Guarded(auth, [reader](const httplib::Request& req, httplib::Response& res) {
             absl::StatusOr<int64_t> id = IdOf(req, "run");
             if (!id.ok()) return Error(res, id.status());
             absl::StatusOr<nmsparse::Json> run = reader->Run(*id);
             if (!run.ok()) return Error(res, run.status());
             res.set_content(RunPage(*run), "text/html; charset=utf-8");
           }));
  http.Get("/api/sweeps", Guarded(auth, [reader](const httplib::Request&, httplib::Response& res) {
             Json(res, reader->Sweeps());
           }));
  http.Get(R"(/api/sweeps/(\d+))",
           Guarded(auth, [cache](const httplib::Request& req, httplib::Response& res) {
             absl::StatusOr<int64_t> id = IdOf(req, "sweep");
             if (!id.ok()) return Error(res, id.status());
             absl::StatusOr<std::shared_ptr<const SweepSnapshot>> snapshot = cache->Snapshot(*id);
             if (!snapshot.ok()) return Error(res, snapshot.status());
             SendVersioned(req, res, (*snapshot)->version,
                           Compress(ToJsonText(Summary(**snapshot), /*pretty=*/false)), kJsonType);
           }));
  http.Get(
      R"(/api/sweeps/(\d+)/runs)",
      Guarded(auth, [cache](const httplib::Request& req, httplib::Response& res) {
        absl::StatusOr<int64_t> id = IdOf(req, "sweep");
        if (!id.ok()) return Error(res, id.status());
        absl::StatusOr<RunsQuery> query = ParseRunsQuery(req.params);
        if (!query.ok()) return Error(res, query.status());
        absl::StatusOr<std::shared_ptr<const SweepSnapshot>> snapshot = cache->Snapshot(*id);
        if (!snapshot.ok()) return Error(res, snapshot.status());
        // The page's ETag is the sweep's version and the query: a page is new only when either is.
        const std::string etag =
            absl::StrCat((*snapshot)->version, "-", absl::Hex(std::hash<std::string>()(QueryText(*query))));
        if (req.get_header_value("If-None-Match") == absl::StrCat("\"", etag, "\"")) {
          return SendVersioned(req, res, etag, CompressedBody(), kJsonType);
        }
        SendVersioned(req, res, etag,
                      Compress(ToJsonText(RunsPage((*snapshot)->rows, *query), /*pretty=*/false)), kJsonType);
      }));
  // The sweep's figures as report/figure_json.h's document, built once per version (sweep_cache.h).
  http.Get(R"(/api/sweeps/(\d+)/figures)",
           Guarded(auth, [cache](const httplib::Request& req, httplib::Response& res) {
             absl::StatusOr<int64_t> id = IdOf(req, "sweep");
             if (!id.ok()) return Error(res, id.status());
             absl::StatusOr<std::shared_ptr<FigureSet>> set = cache->Figures(*id);
             if (!set.ok()) return Error(res, set.status());
             SendVersioned(req, res, (*set)->etag, (*set)->figures_body, kJsonType);
           }));
  // A run has no version of its own (its points, state and attempt all change it): the ETag is its answer's
  // digest, so a poll of an unchanged run costs a read but no transfer.
  http.Get(R"(/api/runs/(\d+))", Guarded(auth, [reader](const httplib::Request& req, httplib::Response& res) {
             absl::StatusOr<int64_t> id = IdOf(req, "run");
             if (!id.ok()) return Error(res, id.status());
             absl::StatusOr<nmsparse::Json> run = reader->Run(*id);
             if (!run.ok()) return Error(res, run.status());
             std::string text = ToJsonText(*run, /*pretty=*/false);
             const std::string etag =
                 absl::StrCat("run-", *id, "-", absl::Hex(std::hash<std::string>()(text)));
             if (req.get_header_value("If-None-Match") == absl::StrCat("\"", etag, "\"")) {
               return SendVersioned(req, res, etag, CompressedBody(), kJsonType);
             }
             SendVersioned(req, res, etag, Compress(std::move(text)), kJsonType);
           }));
  http.Get(R"(/api/runs/(\d+)/logs)",
           Guarded(auth, [reader](const httplib::Request& req, httplib::Response& res) {
             absl::StatusOr<int64_t> id = IdOf(req, "run");
             if (!id.ok()) return Error(res, id.status());
             int64_t from_seq = 0;
             if (req.has_param("from_seq") && !absl::SimpleAtoi(req.get_param_value("from_seq"), &from_seq))
               return Error(res, absl::InvalidArgumentError("from_seq: not a number"));
             Json(res, reader->Logs(*id, from_seq, kMaxLogLines));
           }));
  // The figures' scripts are public (plotly.js is Debian's, figures.js ours): served without a token, like
  // /login. Their URLs carry AssetVersion, so browsers keep them for a year.
  http.Get("/static/plotly.js", [this](const httplib::Request& req, httplib::Response& res) {
    if (!plotly_status_.ok()) return Error(res, absl::NotFoundError(plotly_status_.message()));
    SendAsset(req, res, plotly_js_);
  });
  http.Get("/static/figures.js",
           [this](const httplib::Request& req, httplib::Response& res) { SendAsset(req, res, figures_js_); });
  http.Get("/login", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(LoginPage(""), "text/html; charset=utf-8");
  });
  // Only from the dashboard's own login page: another site's form must not log a browser in (login CSRF).
  http.Post("/login", [auth](const httplib::Request& req, httplib::Response& res) {
    const std::string origin = req.get_header_value("Origin"), referer = req.get_header_value("Referer");
    const std::string token = req.get_param_value("token");
    absl::Status allowed = CheckSameOrigin(origin, referer, req.get_header_value("Host"),
                                           req.get_header_value("X-Forwarded-Host"));
    if (allowed.ok()) allowed = CheckDashboardRead(auth, absl::StrCat("Bearer ", token), "");
    if (!allowed.ok()) {
      res.status = HttpStatusOf(allowed);
      return res.set_content(LoginPage(std::string(allowed.message())), "text/html; charset=utf-8");
    }
    res.set_header("Set-Cookie", SessionCookie(token, origin, referer));
    res.set_redirect("/");
  });
}

}  // namespace nmsparse::server
