#include "server/dashboard/http_auth.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace nmsparse::server
