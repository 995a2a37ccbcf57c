#include "server/dashboard/http_auth.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace nmsparse::server {
namespace {

TEST(HttpAuthTest, CookieValue) {
  EXPECT_EQ(CookieValue("a=1; nmsparse_token=abc; b=2", kTokenCookie), "abc");
  EXPECT_EQ(CookieValue("nmsparse_token=x", kTokenCookie), "x");
  EXPECT_EQ(CookieValue("xnmsparse_token=x; nmsparse_tokenx=y", kTokenCookie), "");
  EXPECT_EQ(CookieValue("", kTokenCookie), "");
}

TEST(HttpAuthTest, OpenWithoutAuthenticator) { EXPECT_TRUE(CheckDashboardRead(nullptr, "", "").ok()); }

TEST(HttpAuthTest, HttpStatus) {
  EXPECT_EQ(HttpStatusOf(absl::UnauthenticatedError("")), 401);
  EXPECT_EQ(HttpStatusOf(absl::PermissionDeniedError("")), 403);
  EXPECT_EQ(HttpStatusOf(absl::NotFoundError("")), 404);
  EXPECT_EQ(HttpStatusOf(absl::UnavailableError("")), 503);
}

// Issue 36: login CSRF. Only the dashboard's own page (Origin, else Referer, on its host) may post /login.
TEST(HttpAuthTest, LoginOnlyFromTheDashboardsOwnPage) {
  const char host[] = "127.0.0.1:8080";
  EXPECT_TRUE(CheckSameOrigin("http://127.0.0.1:8080", "", host).ok());
  EXPECT_TRUE(CheckSameOrigin("https://127.0.0.1:8080", "", host).ok());  // Behind a TLS proxy.
  EXPECT_TRUE(CheckSameOrigin("", "http://127.0.0.1:8080/login", host).ok());
  EXPECT_TRUE(CheckSameOrigin("https://dash.example", "", host, "dash.example").ok());  // The proxy's host.
  for (const char* origin :
       {"http://evil.example", "null", "http://127.0.0.1:80801", "http://127.0.0.1:8080@evil",
        "http://127.0.0.1", "127.0.0.1:8080", "file://127.0.0.1:8080"}) {
    absl::Status refused = CheckSameOrigin(origin, "http://127.0.0.1:8080/login", host);
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << origin;
  }
  EXPECT_TRUE(absl::StrContains(CheckSameOrigin("http://evil.example", "", host).message(), "evil.example"));
  EXPECT_EQ(CheckSameOrigin("", "http://evil.example/page", host).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckSameOrigin("", "", host).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckSameOrigin("http://127.0.0.1:8080", "", "").code(), absl::StatusCode::kPermissionDenied);
}

TEST(HttpAuthTest, SessionCookieIsStrictAndHttpOnlyAndSecureOverTls) {
  EXPECT_EQ(SessionCookie("t", "http://h", ""), "nmsparse_token=t; Path=/; HttpOnly; SameSite=Strict");
  EXPECT_EQ(SessionCookie("t", "https://h", ""),
            "nmsparse_token=t; Path=/; HttpOnly; SameSite=Strict; Secure");
  EXPECT_EQ(SessionCookie("t", "", "https://h/login"),
            "nmsparse_token=t; Path=/; HttpOnly; SameSite=Strict; Secure");
}

}  // namespace
}  // namespace nmsparse::server
